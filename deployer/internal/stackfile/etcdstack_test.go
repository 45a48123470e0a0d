package stackfile

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
)

// TestEtcdStackIsValid validates deploy/etcd-stack.yml against the compose specification, with
// its defaults and with every variable set: three etcd members, each alone on a labelled node
// and answering to its own name (dnsrr), and the serve replicas behind one virtual IP, on a
// store that names all three members.
func TestEtcdStackIsValid(t *testing.T) {
	content, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "etcd-stack.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, env := range map[string]types.Mapping{
		"defaults": {},
		"set": {"LFP_SWARM_LEASE_IMAGE": "registry.example/lfp-swarm-lease@" + digest, "ETCD_IMAGE": "registry.example/etcd:v3.5.17",
			"SERVE_REPLICAS": "5", "SERVE_PORT": "18080", "ROOMS_PREFIX": "team-a", "ETCD_REQUEST_TIMEOUT_MS": "1000",
			"MAX_ACTIVE_ROOMS": "200000", "MAX_CLOCK_SKEW_MS": "500", "ADMISSION_PER_MINUTE": "600", "ETCD_QUOTA_BACKEND_BYTES": "4294967296",
			"ETCD_CLUSTER_TOKEN": "team-a"},
	} {
		t.Run(name, func(t *testing.T) {
			project, err := loader.LoadWithContext(context.Background(), types.ConfigDetails{
				WorkingDir:  ".",
				ConfigFiles: []types.ConfigFile{{Filename: "deploy/etcd-stack.yml", Content: topLevelVersion.ReplaceAll(content, nil)}},
				Environment: env,
			}, func(o *loader.Options) {
				o.SetProjectName("rooms", true)
				o.SkipResolveEnvironment = true
			})
			if err != nil {
				t.Fatalf("deploy/etcd-stack.yml is not a valid stack: %v", err)
			}
			names := project.ServiceNames()
			slices.Sort(names)
			if want := []string{"etcd1", "etcd2", "etcd3", "serve"}; !slices.Equal(names, want) {
				t.Fatalf("services %v, want %v", names, want)
			}
			for i, n := range []string{"etcd1", "etcd2", "etcd3"} {
				s := project.Services[n]
				if s.Deploy == nil || s.Deploy.EndpointMode != "dnsrr" || !slices.Contains(s.Deploy.Placement.Constraints, "node.labels.lfp-etcd == "+string(rune('1'+i))) {
					t.Errorf("%s: deploy %+v: want dnsrr on its own labelled node", n, s.Deploy)
				}
				if !slices.Contains(s.Command, "http://"+n+":2380") || len(s.Volumes) != 1 {
					t.Errorf("%s: command %v, volumes %v", n, s.Command, s.Volumes)
				}
			}
			serve := project.Services["serve"]
			store := serve.Environment["SWARM_LEASE_STORE"]
			if store == nil || !strings.HasPrefix(*store, "etcd://etcd1:2379,etcd2:2379,etcd3:2379/") {
				t.Errorf("serve's store %v does not name the three members", store)
			}
			replicas := 3
			if env["SERVE_REPLICAS"] != "" {
				replicas = 5
			}
			if serve.Deploy == nil || serve.Deploy.EndpointMode != "vip" || serve.Deploy.Replicas == nil || *serve.Deploy.Replicas != replicas {
				t.Errorf("serve: deploy %+v: want %d replicas behind a vip", serve.Deploy, replicas)
			}
			if len(serve.Ports) != 1 || serve.Ports[0].Target != 8080 {
				t.Errorf("serve: ports %+v", serve.Ports)
			}
		})
	}
}
