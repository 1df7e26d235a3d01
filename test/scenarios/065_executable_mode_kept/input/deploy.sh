#!/bin/sh
echo deploying v1
