export PATH="$HOME/bin:$PATH"
printf '%s\n' "$PATH"
	echo `date`
