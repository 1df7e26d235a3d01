#!/bin/sh
name='O'"'"'Brien'
echo "Hello, $name from $HOME" `date` $(whoami) ${USER:-x}
printf '%s\n' "tab:\t backslash:\\ done" 'C:\new\table'
echo "naïve café – ✓ 日本語 🚀"
