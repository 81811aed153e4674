package io.sluice.kafka.internal;

import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersionCollection;
import org.apache.kafka.common.protocol.ApiKeys;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The one table of the Kafka APIs this listener serves: for each, the versions it decodes and answers, the lowest
 * version it advertises, and its handler. {@link KafkaConnection} routes by it, and the ApiVersions answer is derived
 * from it ({@link #advertised()}), so an API is supported exactly when it has a row.
 *
 * <pre>
 *   API              advertised   decoded   handler
 *   ApiVersions      0..4         0..4      ApiVersionsHandler   (no authentication needed)
 *   Metadata         0..12        0..12     MetadataHandler
 *   ...              see {@link #standard}
 * </pre>
 *
 * <p>An advertised floor below the decoded floor exists for librdkafka, which enables features by whether a
 * range includes version 0 (compression needs Produce v0 in the range); it never sends those old versions, and one
 * that arrives closes the connection with a logged reason, as Kafka 4 does (KIP-896). Immutable once built.
 */
public final class KafkaApis {

    /**
     * One row of the table.
     *
     * @param key            the API
     * @param advertisedMin  lowest version ApiVersions announces (at most {@code minVersion})
     * @param minVersion     lowest version decoded and answered
     * @param maxVersion     highest version decoded and answered (and announced)
     * @param beforeAuth     may be called before the connection authenticated (ApiVersions and SASL only)
     * @param handler        serves it
     */
    public record Api(ApiKeys key, short advertisedMin, short minVersion, short maxVersion, boolean beforeAuth,
                      ApiHandler handler) {
        public boolean decodes(short version) {
            return version >= minVersion && version <= maxVersion;
        }
    }

    private final Api[] byKey;
    private final List<Api> rows;

    private KafkaApis(List<Api> rows) {
        int highest = 0;
        for (Api api : rows) {
            highest = Math.max(highest, api.key().id);
        }
        this.byKey = new Api[highest + 1];
        for (Api api : rows) {
            byKey[api.key().id] = api;
        }
        this.rows = Collections.unmodifiableList(new ArrayList<>(rows));
    }

    /**
     * The listener's table. Rows for the group APIs (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
     * OffsetCommit, OffsetFetch, ListGroups, DescribeGroups) are added by {@link GroupApis#register}.
     */
    public static KafkaApis standard(ListenerContext context) {
        Builder table = new Builder()
                .add(ApiKeys.API_VERSIONS, 0, 4, true, new ApiVersionsHandler(context))
                .add(ApiKeys.SASL_HANDSHAKE, 1, 1, true, new SaslHandlers.Handshake())
                .add(ApiKeys.SASL_AUTHENTICATE, 0, 2, true, new SaslHandlers.Authenticate(context))
                .add(ApiKeys.METADATA, 0, 12, false, new MetadataHandler(context));
        ProduceFetchApis.register(table, context);
        GroupApis.register(table, context);
        return table.build();
    }

    /** The row for an API key, or null when this listener does not serve it. */
    public Api lookup(short apiKey) {
        return apiKey >= 0 && apiKey < byKey.length ? byKey[apiKey] : null;
    }

    public List<Api> rows() {
        return rows;
    }

    /** The ApiVersions answer's list: one entry a row, from its advertised floor to its highest version. */
    public ApiVersionCollection advertised() {
        ApiVersionCollection out = new ApiVersionCollection(rows.size());
        for (Api api : rows) {
            out.add(new ApiVersion().setApiKey(api.key().id).setMinVersion(api.advertisedMin()).setMaxVersion(api.maxVersion()));
        }
        return out;
    }

    /** Builds the table; each row's range is checked against what kafka-clients' generated classes can decode. */
    public static final class Builder {
        private final List<Api> rows = new ArrayList<>();

        /** A row advertising exactly the versions it decodes. */
        public Builder add(ApiKeys key, int minVersion, int maxVersion, boolean beforeAuth, ApiHandler handler) {
            return add(key, minVersion, minVersion, maxVersion, beforeAuth, handler);
        }

        /**
         * A row advertising {@code advertisedMin..maxVersion} and decoding {@code minVersion..maxVersion}.
         *
         * @throws IllegalArgumentException for a duplicate API or a range the generated classes cannot decode
         */
        public Builder add(ApiKeys key, int advertisedMin, int minVersion, int maxVersion, boolean beforeAuth,
                           ApiHandler handler) {
            ApiMessageType type = ApiMessageType.fromApiKey(key.id);
            if (minVersion < type.lowestSupportedVersion() || maxVersion > type.highestSupportedVersion(true)
                    || advertisedMin > minVersion || minVersion > maxVersion || advertisedMin < 0) {
                throw new IllegalArgumentException(key + " " + advertisedMin + "/" + minVersion + ".." + maxVersion
                        + ": kafka-clients decodes " + type.lowestSupportedVersion() + ".." + type.highestSupportedVersion(true));
            }
            for (Api row : rows) {
                if (row.key() == key) {
                    throw new IllegalArgumentException(key + " has two rows");
                }
            }
            rows.add(new Api(key, (short) advertisedMin, (short) minVersion, (short) maxVersion, beforeAuth, handler));
            return this;
        }

        public KafkaApis build() {
            return new KafkaApis(rows);
        }
    }
}
