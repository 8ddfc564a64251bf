from agentread.cli import main

raise SystemExit(main())
