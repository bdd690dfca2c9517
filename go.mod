module github.com/llmbench/llmbench

go 1.26.8

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0 // indirect
	github.com/NVIDIA/go-nvml v0.13.4-1 // indirect
	github.com/edsrzf/mmap-go v1.2.0 // indirect
	github.com/spf13/pflag v1.1.0 // indirect
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
