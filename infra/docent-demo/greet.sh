#!/bin/sh
# Greets the person named on the command line; --shout says it louder.
if [ "$1" = "--shout" ]; then
  shift
  echo "Hello, ${1:-world}!" | tr '[:lower:]' '[:upper:]'
else
  echo "Hello, ${1:-world}!"
fi
