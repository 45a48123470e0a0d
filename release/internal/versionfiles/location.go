package versionfiles

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Location is one place that states the shared version.
type Location struct {
	// File is the path of the file, relative to the repository root, with forward slashes.
	File string
	// What names the place inside File, for messages ("version", "require …/lease").
	What string
	// Version is the version found there, without a leading "v".
	Version string
}

// String is the location as messages show it.
func (l Location) String() string { return fmt.Sprintf("%s (%s): %s", l.File, l.What, l.Version) }

// Agreed returns the version every location states, or an error that lists the locations
// grouped by the version they state when they disagree.
func Agreed(locs []Location) (*semver.Version, error) {
	if len(locs) == 0 {
		return nil, fmt.Errorf("versionfiles: no version files found")
	}
	byVersion := map[string][]string{}
	for _, l := range locs {
		byVersion[l.Version] = append(byVersion[l.Version], l.File+" ("+l.What+")")
	}
	if len(byVersion) > 1 {
		var b strings.Builder
		for _, v := range slices.Sorted(maps.Keys(byVersion)) {
			fmt.Fprintf(&b, "\n  %s: %s", v, strings.Join(byVersion[v], ", "))
		}
		return nil, fmt.Errorf("versionfiles: the version files disagree; set them all to one version:%s", b.String())
	}
	v, err := semver.StrictNewVersion(locs[0].Version)
	if err != nil {
		return nil, fmt.Errorf("versionfiles: %s: %q is not a version X.Y.Z: %w", locs[0].File, locs[0].Version, err)
	}
	return v, nil
}
