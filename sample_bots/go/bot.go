// A cardarena bot in Go: plays a uniformly random legal action in every game, drawing an integer
// inside every range it is offered, seeded by --seed, then by game id and seat (the library
// reseeds rng at each game's start), so every game replays exactly. Usage: ./bot [--seed N]
//
// Edit Decide: it gets the decision (View, Legal, Log of this game's events) and returns one
// legal entry, with an integer inside every range (package cardarena has the helpers). Log to
// os.Stderr only.
package main

import (
	"fmt"
	"os"

	"cardarena"
)

type randomBot struct{}

// Decide is the one function to edit: choose this decision's action.
func (randomBot) Decide(decision *cardarena.Decision, rng *cardarena.Rng) (cardarena.Action, error) {
	return cardarena.RandomAction(decision.Legal, rng), nil
}

func main() {
	seed, err := cardarena.ParseSeedArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := cardarena.Serve(randomBot{}, "go-random", "1", seed, cardarena.NewConn(os.Stdin, os.Stdout)); err != nil {
		fmt.Fprintln(os.Stderr, "cardarena:", err)
		os.Exit(1)
	}
}
