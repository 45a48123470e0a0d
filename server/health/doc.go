// Package health is what a server says about its own health: /healthz (the process answers),
// /readyz (its store can be read, and written where that can be checked), and the damage its
// stores found and worked around, logged, counted and shown by /readyz.
package health
