package etcdstore_test

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease/etcdstore"
)

func itoa(i int) string { return strconv.Itoa(i) }

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		in        string
		endpoints []string
		prefix    string
	}{
		{"etcd://127.0.0.1:2379", []string{"127.0.0.1:2379"}, etcdstore.DefaultPrefix},
		{"etcd://a:1,b:2,[::1]:3/team/leases", []string{"a:1", "b:2", "[::1]:3"}, "/team/leases"},
		{"etcd://a:1/x/", []string{"a:1"}, "/x"},
		{"etcd://a:1/", []string{"a:1"}, etcdstore.DefaultPrefix},
	} {
		o, err := etcdstore.ParseURL(c.in)
		if err != nil || !reflect.DeepEqual(o.Endpoints, c.endpoints) || o.Prefix != c.prefix {
			t.Errorf("ParseURL(%q) = %+v, %v; want %v %q", c.in, o, err, c.endpoints, c.prefix)
		}
	}
	for _, bad := range []string{"", "http://a:1", "etcd://", "etcd://a", "etcd://a:1,", "etcd://user:pw@a:1",
		"etcd://a:1?x=1", "etcd://a:1//x", ":1", "etcd://a:b", "etcd://a:0", "etcd://a:65536"} {
		if o, err := etcdstore.ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) = %+v, want an error", bad, o)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []etcdstore.Options{
		{},
		{Endpoints: []string{"a:1"}, CertFile: "c.pem"},
		{Endpoints: []string{"a:1"}, Username: "u"},
		{Endpoints: []string{"a:1"}, Prefix: "x"},
	} {
		if _, err := etcdstore.New(o); err == nil {
			t.Errorf("New(%+v): want an error", o)
		}
	}
}
