package io.sluice.net.protocol;

/**
 * The request types of the Sluice wire protocol (see {@code docs/PROTOCOL.md}). Ids are stable: never reuse one.
 * A server answers a version outside {@code [minVersion, maxVersion]} with {@code UNSUPPORTED_VERSION}. The group
 * calls are at version 1 (member id and generation on every call); their unfenced version 0 is no longer served,
 * nor are PRODUCE and FETCH version 0 (records one by one instead of record batches; no released client sent them).
 */
public enum ApiKey {
    API_VERSIONS(0),
    METADATA(1),
    CREATE_TOPIC(2),
    PRODUCE(3, 1, 1), // one record batch, stored as it is (Produce.VERSION_BATCH)
    FETCH(4, 1, 1), // the stored record batches, shipped unchanged (Fetch.VERSION_BATCHES)
    LIST_OFFSETS(5, 0, 1), // 0: start and end offsets; 1: and the offset for a timestamp (ListOffsets.VERSION_TIMESTAMPS)
    OFFSET_COMMIT(6, 1, 1),
    OFFSET_FETCH(7, 1, 1),
    JOIN_GROUP(8, 1, 1),
    HEARTBEAT(9, 1, 1),
    LEAVE_GROUP(10),
    AUTHENTICATE(11),
    // operator APIs (docs/PROTOCOL.md, "Administration"): ids from 20 up, leaving 12-19 to group-protocol growth
    LIST_GROUPS(20),
    DESCRIBE_GROUP(21, 0, 1), // 1: each lag row names its topic (a Kafka group may read several; Admin.VERSION_ROW_TOPICS)
    RESET_OFFSETS(22),
    DELETE_TOPIC(23),
    ALTER_TOPIC(24);

    private static final ApiKey[] BY_ID;

    static {
        ApiKey[] values = values();
        int maxId = 0;
        for (ApiKey k : values) {
            maxId = Math.max(maxId, k.id);
        }
        BY_ID = new ApiKey[maxId + 1];
        for (ApiKey k : values) {
            BY_ID[k.id] = k;
        }
    }

    public final short id;
    public final short minVersion;
    public final short maxVersion;

    ApiKey(int id) {
        this(id, 0, 0);
    }

    ApiKey(int id, int minVersion, int maxVersion) {
        this.id = (short) id;
        this.minVersion = (short) minVersion;
        this.maxVersion = (short) maxVersion;
    }

    /** @return the API with this id, or null for an id this build does not know */
    public static ApiKey of(short id) {
        return id >= 0 && id < BY_ID.length ? BY_ID[id] : null;
    }

    public boolean supports(short version) {
        return version >= minVersion && version <= maxVersion;
    }
}
