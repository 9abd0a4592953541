package devserver

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"time"

	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"google.golang.org/protobuf/types/known/durationpb"
)

const (
	// clusterName names the single cluster; it is persisted in the cluster
	// metadata and the namespace records, so it must never change.
	clusterName = "active"
	// internalIP is where history, matching and the worker service listen.
	// They talk only to each other and the frontend, so they stay on loopback
	// whatever Options.IP says.
	internalIP = "127.0.0.1"
	// namespaceRetention keeps closed workflows for a week: long enough to
	// look back at last week's prompts in the UI, while the SQLite file stays
	// small because message bodies live in the session store, not in history.
	namespaceRetention = 7 * 24 * time.Hour
)

// listenPlan is every address the server listens on, resolved before start.
type listenPlan struct {
	ip       string // frontend bind address (Options.IP)
	reachIP  string // address clients dial; differs from ip only for 0.0.0.0 / ::
	frontend int
	http     int // frontend HTTP API; Nexus callbacks to this cluster use it
	history  int
	matching int
	worker   int
}

func (p listenPlan) frontendAddr() string { return hostPort(p.reachIP, p.frontend) }

// inUse returns err as a *ListenError (wrapping err) when it reports
// that one of p's ports was in use, else err itself.
func (p listenPlan) inUse(err error) error {
	addr, ok := takenPort(err)
	if !ok {
		return err
	}
	roles := map[int]string{p.frontend: roleFrontend, p.http: roleFrontendHTTP, p.history: roleHistory, p.matching: roleMatching, p.worker: roleWorker}
	role := roles[addr.Port]
	if role == "" {
		return err
	}
	return &ListenError{Port: addr.Port, IP: addr.IP.String(), Role: role, Err: err}
}

func hostPort(ip string, port int) string { return net.JoinHostPort(ip, strconv.Itoa(port)) }

// sqlConfig is the SQLite store for both execution and visibility data:
// SQLite's rollback journal, with the single connection the plugin uses
// without WAL, every commit durable, which is what "state survives a
// restart" needs. WAL measured no better than noise (bench/RESULTS.md).
func sqlConfig(dbPath string) *config.SQL {
	return &config.SQL{
		PluginName:        sqliteplugin.PluginName,
		DatabaseName:      dbPath,
		ConnectAttributes: map[string]string{"mode": "rwc"}, // read-write, create if missing
	}
}

// prepareDatabase creates the schema on first start and registers the
// namespace if it is missing. Both run before the server starts because the
// server neither creates a SQLite schema nor a namespace by itself.
func prepareDatabase(sql *config.SQL, dbPath, namespace string) error {
	if _, err := os.Stat(dbPath); errors.Is(err, fs.ErrNotExist) {
		if err := sqliteschema.SetupSchema(sql); err != nil {
			// A half-built schema would fail every later start; removing the
			// file lets the next start begin again from nothing.
			_ = os.Remove(dbPath)
			return fmt.Errorf("devserver: create schema in %s: %w", dbPath, err)
		}
	} else if err != nil {
		return fmt.Errorf("devserver: stat database %s: %w", dbPath, err)
	}

	ns, err := sqliteschema.NewNamespaceConfig(clusterName, namespace, false, nil)
	if err != nil {
		return fmt.Errorf("devserver: build namespace %q: %w", namespace, err)
	}
	ns.Detail.Config.Retention = durationpb.New(namespaceRetention)
	// A no-op when the namespace already exists, so a restart keeps the
	// namespace id that the persisted workflows refer to.
	if err := sqliteschema.CreateNamespaces(sql, ns); err != nil {
		return fmt.Errorf("devserver: register namespace %q: %w", namespace, err)
	}
	return nil
}

// serverConfig is the static configuration of all four services in one
// process with one history shard.
func serverConfig(plan listenPlan, sql *config.SQL) *config.Config {
	var c config.Config
	c.Global.Membership.MaxJoinDuration = 30 * time.Second
	c.Global.Membership.BroadcastAddress = internalIP

	const store = "sqlite-default"
	c.Persistence.DefaultStore = store
	c.Persistence.VisibilityStore = store
	c.Persistence.NumHistoryShards = 1 // persisted on first start; one shard suits one process
	c.Persistence.DataStores = map[string]config.DataStore{store: {SQL: sql}}

	c.ClusterMetadata = &cluster.Config{
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{
			clusterName: {
				Enabled:                true,
				InitialFailoverVersion: 1,
				// Addresses are refreshed in the persisted metadata on every
				// start, so a restart on other ports is fine. The cluster id is
				// left empty: the server generates one on first start and
				// keeps the persisted one afterwards.
				RPCAddress:  plan.frontendAddr(),
				HTTPAddress: hostPort(plan.reachIP, plan.http),
			},
		},
	}

	c.Services = map[string]config.Service{
		string(primitives.FrontendService): {RPC: config.RPC{GRPCPort: plan.frontend, HTTPPort: plan.http, BindOnIP: plan.ip}},
		string(primitives.HistoryService):  {RPC: config.RPC{GRPCPort: plan.history, BindOnIP: internalIP}},
		string(primitives.MatchingService): {RPC: config.RPC{GRPCPort: plan.matching, BindOnIP: internalIP}},
		string(primitives.WorkerService):   {RPC: config.RPC{GRPCPort: plan.worker, BindOnIP: internalIP}},
	}

	// Left at their zero values: no global namespaces, no redirection
	// between clusters ("" is noop) and no archival ("" is disabled).

	// The worker service (schedules, batch operations) is a client of the
	// frontend like any other.
	c.PublicClient.HostPort = plan.frontendAddr()
	return &c
}

// staticHosts tells each service where the others are; with a fixed host
// list the server needs no membership gossip (ringpop) at all.
func staticHosts(plan listenPlan) map[primitives.ServiceName]static.Hosts {
	return map[primitives.ServiceName]static.Hosts{
		primitives.FrontendService: static.SingleLocalHost(plan.frontendAddr()),
		primitives.HistoryService:  static.SingleLocalHost(hostPort(internalIP, plan.history)),
		primitives.MatchingService: static.SingleLocalHost(hostPort(internalIP, plan.matching)),
		primitives.WorkerService:   static.SingleLocalHost(hostPort(internalIP, plan.worker)),
	}
}

// dynamicConfig holds the dev-server overrides of the server's defaults.
func dynamicConfig() dynamicconfig.StaticClient {
	return dynamicconfig.StaticClient{
		// Search attributes and Nexus endpoints are visible as soon as they
		// are created instead of after a cache refresh; creating them is rare,
		// and a dev server should not make a test wait for consistency.
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): true,
		dynamicconfig.ForceNexusEndpointRefreshOnRead.Key():         true,
		// Reading through those caches costs persistence calls, so raise the
		// persistence rate limits (keeping the defaults' ratio).
		dynamicconfig.FrontendPersistenceMaxQPS.Key(): 10000,
		dynamicconfig.HistoryPersistenceMaxQPS.Key():  45000,
		// The UI and CLI list and count workflows often; the default
		// visibility rate per namespace is tight for one person clicking
		// around while a worker polls.
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		// A larger mutable-state cache: every running workflow of a dev
		// server lives on this one host.
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key(): 8096,
		// The transfer queue (which dispatches workflow and activity
		// tasks) reads at most this many times a second once its burst is
		// spent; at the default 20, every round trip of a busy prompt
		// waited for the next read: 50 ms per activity, a tool step 100 ms
		// (bench/RESULTS.md, tools).
		dynamicconfig.TransferProcessorMaxPollRPS.Key(): 1000,
		// One partition per task queue: a dev server is one matching host,
		// and with the default four a task's place in the queue is a
		// random partition's, so priority keys (model calls of
		// interactive prompts first, docs/spec.md 18.3) would order tasks
		// only roughly.
		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():  1,
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key(): 1,
	}
}
