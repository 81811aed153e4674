package io.sluice.net.protocol;

/**
 * The request types of the Sluice wire protocol (see {@code docs/PROTOCOL.md}). Ids are stable: never reuse one.
 * Every API is at version 0; a server answers a version outside {@code [minVersion, maxVersion]} with
 * {@code UNSUPPORTED_VERSION}.
 */
public enum ApiKey {
    API_VERSIONS(0),
    METADATA(1),
    CREATE_TOPIC(2),
    PRODUCE(3),
    FETCH(4),
    LIST_OFFSETS(5),
    OFFSET_COMMIT(6),
    OFFSET_FETCH(7),
    JOIN_GROUP(8),
    HEARTBEAT(9),
    LEAVE_GROUP(10),
    AUTHENTICATE(11),
    // operator APIs (docs/PROTOCOL.md, "Administration"): ids from 20 up, leaving 12-19 to group-protocol growth
    LIST_GROUPS(20),
    DESCRIBE_GROUP(21),
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
    public final short minVersion = 0;
    public final short maxVersion = 0;

    ApiKey(int id) {
        this.id = (short) id;
    }

    /** @return the API with this id, or null for an id this build does not know */
    public static ApiKey of(short id) {
        return id >= 0 && id < BY_ID.length ? BY_ID[id] : null;
    }

    public boolean supports(short version) {
        return version >= minVersion && version <= maxVersion;
    }
}
