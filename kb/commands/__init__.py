"""One module per `kb` subcommand; each is imported only when its command runs."""
