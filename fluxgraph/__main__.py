from fluxgraph.cli import entry

entry()
