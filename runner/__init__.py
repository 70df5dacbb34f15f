"""cardarena: the referee, the games, tournaments, ratings and the command line."""
