// Command pause is the pod sandbox's process for tools/k8s: it holds the
// pod's namespaces and does nothing until SIGINT or SIGTERM ends it.
// It reaps orphans too, as the upstream pause does, since it is PID 1 when
// the pod shares its PID namespace.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
