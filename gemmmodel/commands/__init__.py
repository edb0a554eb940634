"""One module per CLI subcommand. Each defines add_parser(subparsers) and run(args) -> int."""
