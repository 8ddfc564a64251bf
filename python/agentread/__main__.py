from agentread.cli import run

run()
