from zengram.mcp_server.main import main

main()
