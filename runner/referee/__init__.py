"""The referee: bot processes, the decision loop of a match, and typed faults."""
