package filestore

import (
	"fmt"
	"testing"
)

// TestKnownNamespacesValidate: a remembered namespace passes, an invalid one is refused every
// time (never remembered), and past the bound namespaces are still checked, just not kept.
func TestKnownNamespacesValidate(t *testing.T) {
	var k knownNamespaces
	for range 2 {
		if err := k.validate("default"); err != nil {
			t.Fatal(err)
		}
		if err := k.validate("../etc"); err == nil {
			t.Fatal("an invalid namespace passed")
		}
	}
	for i := range maxKnownNamespaces + 10 {
		if err := k.validate(fmt.Sprintf("ns-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.validate("bad/one"); err == nil {
		t.Fatal("an invalid namespace passed once the bound was reached")
	}
	kept := 0
	k.valid.Range(func(any, any) bool { kept++; return true })
	if kept > maxKnownNamespaces {
		t.Errorf("kept %d namespaces, at most %d", kept, maxKnownNamespaces)
	}
}
