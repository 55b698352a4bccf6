module sched-bench-go

go 1.19
