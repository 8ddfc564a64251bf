from agentread.cli import main

main()
