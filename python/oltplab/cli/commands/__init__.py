"""One module per verb: parse the arguments, call the runner, print."""
