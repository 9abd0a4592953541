package activities

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"
)

// A variable of the worker's environment that ScrubEnv withholds from
// bash. A command can still read it from the worker's /proc/<pid>/environ
// (as root, or when the process is dumpable), which shows the process's
// initial environment only (os.Setenv does not change it): TestMain puts
// it there by running the test binary again with it.
const (
	TestEnvSecretName  = "DA_TEST_SERVICE_TOKEN"
	TestEnvSecretValue = "svc-Q7pLm2XvR9tK4wZa8bNc"
)

func TestMain(m *testing.M) {
	if runtime.GOOS == "linux" && os.Getenv(TestEnvSecretName) != TestEnvSecretValue {
		self, err := os.Executable()
		if err == nil {
			err = syscall.Exec(self, os.Args, append(os.Environ(), TestEnvSecretName+"="+TestEnvSecretValue))
		}
		fmt.Fprintf(os.Stderr, "activities tests: run again with %s in the environment: %v\n", TestEnvSecretName, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}
