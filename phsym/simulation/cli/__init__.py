"""The simulation's subcommands of ``phsym`` (listed in :data:`phsym.cli.PLUGINS`, each with
``add_parser(subparsers)``): :mod:`.simulate`, :mod:`.op`, :mod:`.ac`, :mod:`.dc`, :mod:`.tf`, :mod:`.sweep` and :mod:`.cache`."""
