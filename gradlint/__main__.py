from gradlint.cli import console_main

console_main()
