from fluxgraph.cli import main

main()
