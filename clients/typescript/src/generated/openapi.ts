// Generated from clients/openapi.json by `bun run clients:build` (openapi-typescript). Do not edit:
// change the server's handlers, regenerate the contract, then run the build.

export interface paths {
    "/elections": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a room
         * @description Returns a fresh room id (192 random bits). Creating a room stores nothing: its state appears on the first campaign. Spends one request of the client's admission budget.
         */
        post: operations["createElection"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/elections/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A room's leader
         * @description Always 200 for a valid id: an unknown room is vacant. Never returns the token. Not rate-limited.
         */
        get: operations["statusElection"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/elections/{id}/campaign": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Campaign for a room's leadership
         * @description The first live campaign wins a new term and a leader token; everyone else — the live leader campaigning again included — is a follower told who leads and when to retry. Check order: 403, 429, then room id, candidate, metadata, ttl (400).
         */
        post: operations["campaignElection"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/elections/{id}/renew": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Renew a term
         * @description Extends the caller's term for ttl_seconds from now (default 30; it may shorten the lease), keeping the term. 404 lease_not_current when the room is vacant or expired; 400 lease_not_current when another term holds it. Never rate-limited.
         */
        post: operations["renewElection"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/elections/{id}/resign": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Resign a term
         * @description Ends the caller's term at once; the room is vacant and its next term is higher. Errors as for renew. Never rate-limited.
         */
        post: operations["resignElection"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/elections/{id}/watch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Server-sent events of a room
         * @description `text/event-stream`. Every event is `event: state` with `retry: 1000` and a WatchFrame as data. The first frame is the current snapshot; later frames follow changes (duplicates are possible). No event ids; `Last-Event-ID` is ignored. A comment line is sent every keep-alive interval (15 s). The stream closes when the client lags, on a store failure, and after the server's maximum stream lifetime (900 s by default); clients reconnect.
         */
        get: operations["watchElection"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Process liveness
         * @description Answers as long as the process serves HTTP. Never calls the store.
         */
        get: operations["healthz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Store readiness
         * @description Reads the store (the election, else a rooms shard): on Swarm this needs a manager whose Swarm has a leader (quorum). A file store must also be able to write (space, permissions). Damage the store worked around is in `details`.
         */
        get: operations["readyz"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Server-sent events of the election
         * @description `text/event-stream`. The first event is `current` with the State; later events are `change`, sent only when the holder or the fence changes (routine renewals are suppressed). A comment line (`: keep-alive`) is sent every keep-alive interval. Every replica observes the same election, so a client may reconnect to any of them.
         */
        get: operations["streamEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/info": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The bound election and this process's identity */
        get: operations["getInfo"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/state": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The election's current state
         * @description The newest snapshot of this process's watcher (event-driven, and at most one poll interval old).
         */
        get: operations["getState"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        CampaignRequest: {
            /**
             * @description Required: 1–64 bytes of [A-Za-z0-9._:@-]. Not a unique key.
             * @example worker-a
             */
            candidate_id?: string;
            /** @description Optional, at most 1024 characters; shown to everyone who reads the room. */
            metadata?: string | null;
            /**
             * @description Lease duration, 5–300 seconds (default 30).
             * @example 30
             */
            ttl_seconds?: number | null;
        } & {
            [key: string]: unknown;
        };
        CampaignResult: {
            election_id: string;
            leader: components["schemas"]["ElectionLeader"];
            /** @description Leaders only: the bearer capability for this term (256 bits, base64url). Keep it out of URLs and logs. */
            leader_token?: string;
            /**
             * Format: int64
             * @description Leaders only: renew after this many milliseconds (half the TTL).
             * @example 15000
             */
            renew_after_ms?: number;
            /**
             * Format: int64
             * @description Followers only: milliseconds until the leader's lease can be taken over.
             * @example 29876
             */
            retry_after_ms?: number;
            /**
             * @description leader: the caller holds the term; follower: someone else (or the caller itself, campaigning again) does.
             * @enum {string}
             */
            status: "leader" | "follower";
        };
        CreatedElection: {
            /** @example /elections/q3Zb0nJ8m1v0cJ2h0sZ8H1tU9a7yW4eR/campaign */
            campaign_path: string;
            /**
             * @description The new room's id: 192 random bits, base64url without padding.
             * @example q3Zb0nJ8m1v0cJ2h0sZ8H1tU9a7yW4eR
             */
            election_id: string;
            /** @example /elections/q3Zb0nJ8m1v0cJ2h0sZ8H1tU9a7yW4eR */
            status_path: string;
            /** @example /elections/q3Zb0nJ8m1v0cJ2h0sZ8H1tU9a7yW4eR/watch */
            watch_path: string;
        };
        ElectionLeader: {
            /**
             * @description The leader's candidate id.
             * @example worker-a
             */
            candidate_id: string;
            /**
             * Format: date-time
             * @description When the lease ends unless renewed (RFC 3339, UTC).
             * @example 2026-11-29T12:00:30.000Z
             */
            expires_at: string;
            /** @description The leader's metadata; omitted when it gave none. */
            metadata?: string;
            /**
             * Format: int64
             * @description The fencing term: strictly increasing within the room, never reused.
             * @example 1842
             */
            term: number;
        };
        ElectionStatus: {
            election_id: string;
            /** @description The live leader; omitted when vacant. */
            leader?: components["schemas"]["ElectionLeader"];
            /**
             * Format: int64
             * @description Milliseconds until the leader's lease can be taken over; 0 when vacant.
             */
            retry_after_ms: number;
            /** @enum {string} */
            status: "leader" | "vacant";
        };
        ErrorBody: {
            /**
             * @description Stable, machine-readable error code.
             * @example not_found
             */
            code: string;
            /** @description Specifics: the invalid field, what to do. Never secrets. */
            details: string;
            /**
             * @description What went wrong, for people.
             * @example election not found
             */
            error: string;
            /**
             * @description The request's ID, also in the X-Request-Id header.
             * @example req_4f6c1d0e9a8b7c6d5e4f3a2b1c0d9e8f
             */
            request_id: string;
            /**
             * Format: int64
             * @description How long to wait before retrying, where retrying makes sense.
             */
            retry_after_ms?: number;
        };
        HealthBody: {
            /** @description Damage the store found and worked around since the server started (never routine; see the log); absent when none. */
            details?: string;
            /**
             * @description "ok" or "ready".
             * @example ok
             */
            status: string;
        };
        InfoBody: {
            /** @description This process's holder ID. */
            holder_id: string;
            /**
             * @description The election this server serves.
             * @example consul-controllers
             */
            namespace: string;
            /** @description This process's Swarm node ID. */
            node_id: string;
            /**
             * @description The store the election lives in.
             * @example swarm store at unix:///var/run/docker.sock
             */
            store: string;
            /** @description This process's Swarm task ID. */
            task_id: string;
            /**
             * @description The lfp-swarm-lease version.
             * @example 0.1.0
             */
            version: string;
        };
        RenewRequest: {
            /** @description The token of the term to renew. */
            leader_token?: string;
            /**
             * @description New lease duration from now, 5–300 seconds (default 30, not the original TTL).
             * @example 30
             */
            ttl_seconds?: number | null;
        } & {
            [key: string]: unknown;
        };
        ResignRequest: {
            /** @description The token of the term to end. */
            leader_token?: string;
        } & {
            [key: string]: unknown;
        };
        ResignResult: {
            election_id: string;
            /**
             * Format: int64
             * @description The term that ended.
             */
            previous_term: number;
            /** @enum {string} */
            status: "vacant";
        };
        State: {
            /** @description Whether the election currently has a holder whose lease has not expired. */
            acquired: boolean;
            /**
             * Format: date-time
             * @description When the current term started (holder's clock).
             */
            acquired_at: string | null;
            /** @description Whether the election has a stored record (false before the first acquisition and after destroy). */
            exists: boolean;
            /**
             * Format: date-time
             * @description When the lease expires unless renewed (holder's clock).
             */
            expires_at: string | null;
            /**
             * Format: int64
             * @description The fencing token of the current (or last) term: strictly increasing, never reused.
             */
            fence: number;
            /** @description The holder's ID (empty without a holder). */
            holder_id: string;
            /**
             * @description The election's name.
             * @example consul-controllers
             */
            namespace: string;
            /** @description The holder's Swarm node ID. */
            node_id: string;
            /**
             * Format: date-time
             * @description The holder's last renewal (holder's clock).
             */
            renewed_at: string | null;
            /** @description The holder's Swarm task ID. */
            task_id: string;
            /**
             * Format: int64
             * @description The lease duration the holder recorded.
             */
            ttl_ms: number;
        };
        WatchFrame: {
            election_id: string;
            /** @description The live leader, or null when vacant. Never the token. */
            leader: components["schemas"]["ElectionLeader"];
            /**
             * Format: date-time
             * @description When this server read the state (RFC 3339, UTC).
             */
            observed_at: string;
            /**
             * Format: int64
             * @description Milliseconds until the leader's lease can be taken over; 0 when vacant.
             */
            retry_after_ms: number;
            /**
             * Format: int64
             * @description The frame's schema version: 1.
             * @enum {integer}
             */
            schema_version: 1;
            /** @enum {string} */
            status: "leader" | "vacant";
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    createElection: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "Cache-Control"?: string;
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CreatedElection"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Too Many Requests */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Internal Server Error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    statusElection: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Room id: 8–64 characters of [A-Za-z0-9_-]. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ElectionStatus"];
                };
            };
            /** @description Bad Request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Unprocessable Entity */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Internal Server Error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Service Unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    campaignElection: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Room id: 8–64 characters of [A-Za-z0-9_-]. */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CampaignRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CampaignResult"];
                };
            };
            /** @description Bad Request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Unsupported Media Type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Unprocessable Entity */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Too Many Requests */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Internal Server Error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Service Unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    renewElection: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Room id: 8–64 characters of [A-Za-z0-9_-]. */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RenewRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CampaignResult"];
                };
            };
            /** @description Bad Request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not Found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Unsupported Media Type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Unprocessable Entity */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Internal Server Error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Service Unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    resignElection: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Room id: 8–64 characters of [A-Za-z0-9_-]. */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ResignRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ResignResult"];
                };
            };
            /** @description Bad Request */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Not Found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Unsupported Media Type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Unprocessable Entity */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Internal Server Error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Service Unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    watchElection: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Room id: 8–64 characters of [A-Za-z0-9_-]. */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The event stream; each event's data is a WatchFrame. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["WatchFrame"];
                };
            };
            /** @description Invalid room id (invalid_input). */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Public elections are disabled (forbidden). */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Too many watch streams from this client or on this server (rate_limited, with Retry-After). */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description The store is unavailable. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    healthz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthBody"];
                };
            };
            /** @description Error */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    readyz: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthBody"];
                };
            };
            /** @description Internal Server Error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Service Unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    streamEvents: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The event stream; each event's data is a State. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": components["schemas"]["State"];
                };
            };
            /** @description Too many SSE clients on this server. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getInfo: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InfoBody"];
                };
            };
            /** @description Error */
            default: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getState: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["State"];
                };
            };
            /** @description Internal Server Error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Service Unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
}
