export PATH="$HOME/bin:$PATH"
printf '%s\t%s\n' "$PATH" "$(id -u)"
	echo '\'
	echo `date`
