// sched-bench-go: Go equivalents of the scheduler benches of Tokio's
// benches/rt_multi_threaded.rs (plus blitz's spawn_await, fanout_tree,
// burst_wake and pipeline), with Tokio's parameters and the same JSON
// output as sched-bench-tokio.
//
// Mapping: task = goroutine, yield_now = runtime.Gosched, oneshot = buffered
// chan of size 1, JoinHandle = per-goroutine buffered chan of size 1,
// std mpsc sync_channel = buffered chan, workers = GOMAXPROCS.
// See experiments/peers/README.md for caveats (notably: Go has no "remote"
// spawn).
//
// Usage: sched-bench-go [--workers N] [--iters K] [--warmup W]
//
//	[--bench NAME|all|NAME,NAME..] [--backend none]
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	numSpawn   = 10_000 // spawn_many_*, spawn_await
	numYield   = 1_000  // yield_many: yields per task
	yieldTasks = 200    // yield_many: tasks
	numPings   = 1_000  // ping_pong
	chainLen   = 1_000  // chained_spawn

	fanout      = 4      // fanout_tree: children per goroutine
	fanoutDepth = 7      // fanout_tree: levels below the root
	fanoutTasks = 21_845 // fanout_tree: (4^8 - 1) / 3
	burstTasks  = 100    // burst_wake: spawns per burst
	bursts      = 10     // burst_wake: bursts per iteration
	burstGap    = time.Millisecond
	pipeStages  = 4 // pipeline: goroutines, source and sink included
	pipeItems   = 10_000
	pipeCap     = 16
)

var allBenches = []string{
	"spawn_many_local",
	"spawn_many_remote",
	"yield_many",
	"ping_pong",
	"chained_spawn",
	"spawn_await",
	"fanout_tree",
	"burst_wake",
	"pipeline",
}

// spawn_many_local: one goroutine ("the block_on task") spawns 10,000
// goroutines that count down an atomic; the last one signals a channel the
// spawner waits on (Tokio: rt_multi_spawn_many_local).
func spawnManyLocal() func() {
	done := make(chan struct{}, 1000)
	var rem int64
	return func() {
		atomic.StoreInt64(&rem, numSpawn)
		root := make(chan struct{})
		go func() {
			for i := 0; i < numSpawn; i++ {
				go func() {
					if atomic.AddInt64(&rem, -1) == 0 {
						done <- struct{}{}
					}
				}()
			}
			<-done
			close(root)
		}()
		<-root
	}
}

// spawn_many_remote: the main goroutine, locked to its OS thread, spawns
// 10,000 empty goroutines and then waits for all of them (Tokio:
// rt_multi_spawn_many_remote_idle, which awaits the 10,000 JoinHandles;
// a WaitGroup is Go's cheapest "join all"). NOT a real remote spawn: a
// locked goroutine still runs on a P and `go` still pushes onto that P's
// local run queue. See README.
func spawnManyRemote() func() {
	var wg sync.WaitGroup
	return func() {
		wg.Add(numSpawn)
		for i := 0; i < numSpawn; i++ {
			go func() {
				wg.Done()
			}()
		}
		wg.Wait()
	}
}

// yield_many: the main goroutine spawns 200 goroutines that each call
// runtime.Gosched() 1,000 times and then signal; main waits for 200 signals
// (Tokio: rt_multi_yield_many).
func yieldMany() func() {
	done := make(chan struct{}, yieldTasks)
	return func() {
		for i := 0; i < yieldTasks; i++ {
			go func() {
				for j := 0; j < numYield; j++ {
					runtime.Gosched()
				}
				done <- struct{}{}
			}()
		}
		for i := 0; i < yieldTasks; i++ {
			<-done
		}
	}
}

// ping_pong: a root goroutine spawns 1,000 goroutines; each creates two
// oneshots, spawns a goroutine that receives on the first and sends on the
// second, sends on the first, receives on the second, then counts down
// (Tokio: rt_multi_ping_pong).
func pingPong() func() {
	done := make(chan struct{}, 1000)
	var rem int64
	return func() {
		atomic.StoreInt64(&rem, numPings)
		go func() {
			for i := 0; i < numPings; i++ {
				go func() {
					tx1 := make(chan struct{}, 1)
					tx2 := make(chan struct{}, 1)
					go func() {
						<-tx1
						tx2 <- struct{}{}
					}()
					tx1 <- struct{}{}
					<-tx2
					if atomic.AddInt64(&rem, -1) == 0 {
						done <- struct{}{}
					}
				}()
			}
		}()
		<-done
	}
}

// chained_spawn: each goroutine spawns the next, 1,000 deep; the last
// signals (Tokio: rt_multi_chained_spawn).
func chainIter(done chan<- struct{}, n int) {
	if n == 0 {
		done <- struct{}{}
	} else {
		go chainIter(done, n-1)
	}
}

func chainedSpawn() func() {
	done := make(chan struct{}, 1000)
	return func() {
		go chainIter(done, chainLen)
		<-done
	}
}

// spawn_await (ours, not in Tokio): one goroutine spawns 10,000 goroutines,
// each with its own result channel (a JoinHandle), then receives from each
// in spawn order.
func spawnAwait() func() {
	return func() {
		root := make(chan int)
		go func() {
			handles := make([]chan int, numSpawn)
			for i := 0; i < numSpawn; i++ {
				h := make(chan int, 1)
				handles[i] = h
				go func(i int) { h <- i }(i)
			}
			sum := 0
			for _, h := range handles {
				sum += <-h
			}
			root <- sum
		}()
		if sum := <-root; sum != numSpawn*(numSpawn-1)/2 {
			panic("spawn_await: bad sum")
		}
	}
}

// fanout_tree (ours): each goroutine spawns 4 children and waits for them
// (a WaitGroup, the children's counts in a slice), 7 levels below a root
// goroutine; each returns the goroutines in its subtree.
func node(depth int) int {
	count := 1
	if depth > 0 {
		var wg sync.WaitGroup
		var sub [fanout]int
		wg.Add(fanout)
		for i := 0; i < fanout; i++ {
			go func(i int) {
				sub[i] = node(depth - 1)
				wg.Done()
			}(i)
		}
		wg.Wait()
		for _, c := range sub {
			count += c
		}
	}
	return count
}

func fanoutTree() func() {
	return func() {
		root := make(chan int)
		go func() { root <- node(fanoutDepth) }()
		if n := <-root; n != fanoutTasks {
			panic("fanout_tree: wrong count")
		}
	}
}

// burst_wake (ours): 10 times, let the runtime go idle (a 1 ms sleep, not
// timed), then spawn 100 goroutines from main and wait for all of them
// (a channel from the last).  Each goroutine's wait from its spawn to its
// first run is a latency sample; the time is the bursts' alone.  Go has
// no remote spawn: main's `go` pushes to its own P (caveat 2).
func burstWake(lat *[]int64) func() int64 {
	done := make(chan struct{}, 1)
	var wait [burstTasks]int64
	var left int64
	return func() int64 {
		var total int64
		for k := 0; k < bursts; k++ {
			time.Sleep(burstGap)
			atomic.StoreInt64(&left, burstTasks)
			start := time.Now()
			for i := 0; i < burstTasks; i++ {
				spawned := time.Now()
				go func(i int) {
					wait[i] = int64(time.Since(spawned))
					if atomic.AddInt64(&left, -1) == 0 {
						done <- struct{}{}
					}
				}(i)
			}
			<-done
			total += int64(time.Since(start))
			*lat = append(*lat, wait[:]...)
		}
		return total
	}
}

// pipeline (ours): 4 goroutines in a chain joined by channels of 16; the
// source sends 10,000 numbers through two relays to the sink, which sums
// them.  A root goroutine starts the stages (sink first) and waits for the
// sink's sum.
func pipeline() func() {
	return func() {
		root := make(chan uint64)
		go func() {
			sum := make(chan uint64)
			in := make(chan uint64, pipeCap)
			go func(in <-chan uint64) {
				var s uint64
				for v := range in {
					s += v
				}
				sum <- s
			}(in)
			for i := 0; i < pipeStages-2; i++ {
				next := make(chan uint64, pipeCap)
				go func(in <-chan uint64, out chan<- uint64) {
					for v := range in {
						out <- v
					}
					close(out)
				}(next, in)
				in = next
			}
			go func(out chan<- uint64) {
				for i := uint64(0); i < pipeItems; i++ {
					out <- i
				}
				close(out)
			}(in)
			root <- <-sum
		}()
		if s := <-root; s != pipeItems*(pipeItems-1)/2 {
			panic("pipeline: wrong sum")
		}
	}
}

// timed - an untimed bench body timed as a whole (what every bench but
// burst_wake is).
func timed(body func()) func() int64 {
	return func() int64 {
		t0 := time.Now()
		body()
		return int64(time.Since(t0))
	}
}

func makeBench(name string, lat *[]int64) (ops int, body func() int64) {
	switch name {
	case "spawn_many_local":
		return numSpawn, timed(spawnManyLocal())
	case "spawn_many_remote":
		return numSpawn, timed(spawnManyRemote())
	case "yield_many":
		return yieldTasks * numYield, timed(yieldMany())
	case "ping_pong":
		return numPings, timed(pingPong())
	case "chained_spawn":
		return chainLen, timed(chainedSpawn())
	case "spawn_await":
		return numSpawn, timed(spawnAwait())
	case "fanout_tree":
		return fanoutTasks, timed(fanoutTree())
	case "burst_wake":
		return bursts * burstTasks, burstWake(lat)
	case "pipeline":
		return pipeItems, timed(pipeline())
	}
	return 0, nil
}

func die(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "sched-bench-go: "+format+"\n", a...)
	flag.Usage()
	os.Exit(2)
}

func main() {
	// All benches are driven from the main goroutine, pinned to the main
	// OS thread (see spawn_many_remote).
	runtime.LockOSThread()

	workers := flag.Int("workers", 2, "GOMAXPROCS")
	iters := flag.Int("iters", 15, "measured iterations")
	warmup := flag.Int("warmup", 3, "warm-up iterations")
	bench := flag.String("bench", "all", "bench name, comma list, or all: "+strings.Join(allBenches, " "))
	backend := flag.String("backend", "none", "I/O backend (only none)")
	flag.Parse()
	if flag.NArg() != 0 {
		die("unexpected argument %q", flag.Arg(0))
	}
	if *workers < 1 || *iters < 1 || *warmup < 0 {
		die("--workers and --iters must be >= 1, --warmup >= 0")
	}
	if *backend != "none" {
		die("--backend must be none")
	}
	var names []string
	for _, b := range strings.Split(*bench, ",") {
		if b == "all" {
			names = append(names, allBenches...)
		} else if ops, _ := makeBench(b, nil); ops != 0 {
			names = append(names, b)
		} else {
			die("unknown bench %q", b)
		}
	}

	runtime.GOMAXPROCS(*workers)

	for _, name := range names {
		var lat []int64
		ops, body := makeBench(name, &lat)
		for i := 0; i < *warmup; i++ {
			body()
		}
		lat = lat[:0]
		samples := make([]int64, *iters)
		for i := range samples {
			samples[i] = body()
		}
		sort.Slice(samples, func(a, b int) bool { return samples[a] < samples[b] })
		n := len(samples)
		med := samples[n/2]
		if n%2 == 0 {
			med = (samples[n/2-1] + samples[n/2]) / 2
		}
		// burst_wake: spawn to first run over every measured goroutine, nearest rank.
		extra := ""
		if len(lat) > 0 {
			sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
			extra = fmt.Sprintf(",\"p50_ns\":%d,\"p99_ns\":%d", quantile(lat, 0.50), quantile(lat, 0.99))
		}
		fmt.Printf("{\"runtime\":\"go\",\"bench\":\"%s\",\"workers\":%d,\"backend\":\"%s\","+
			"\"ops\":%d,\"iters\":%d,\"median_ns\":%d,\"min_ns\":%d,\"ns_per_op\":%.2f%s}\n",
			name, *workers, *backend, ops, *iters, med, samples[0], float64(med)/float64(ops), extra)
	}
}

// quantile - the nearest-rank q-quantile of sorted samples (as the C
// side's bench_quantile).
func quantile(sorted []int64, q float64) int64 {
	rank := int(math.Ceil(q * float64(len(sorted))))
	if rank < 1 {
		rank = 1
	}
	if rank > len(sorted) {
		rank = len(sorted)
	}
	return sorted[rank-1]
}
