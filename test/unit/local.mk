##
## GoogleTest unit tests of the core; included from the top-level Makefile.am.
## (The core engineer fills in the programs.)
##
