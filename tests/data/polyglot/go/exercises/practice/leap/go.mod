module leap

go 1.18
