"""Labs: a whole study (server configs x workloads x concurrency x repeats) from one file,
run by one command, resumably (docs/labs.md). The lab directory's documents are typed in
oltplab.documents.lab."""
