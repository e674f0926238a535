from fixbot import cli

raise SystemExit(cli.main())
