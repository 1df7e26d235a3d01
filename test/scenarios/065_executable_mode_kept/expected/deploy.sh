#!/bin/sh
echo deploying v2
