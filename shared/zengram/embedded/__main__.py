from zengram.embedded.cli import main

main()
