from fluxgraph._entry import run

run()
