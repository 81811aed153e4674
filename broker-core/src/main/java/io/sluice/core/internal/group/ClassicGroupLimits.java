package io.sluice.core.internal.group;

import io.sluice.core.SluiceException;

/**
 * Bounds of the classic (Kafka) groups of one coordinator, validated once.
 *
 * @param minSessionTimeoutMillis a join asking for less is refused (INVALID_SESSION_TIMEOUT); Kafka's
 *                                {@code group.min.session.timeout.ms} is 6,000
 * @param maxSessionTimeoutMillis a join asking for more is refused; Kafka's {@code group.max.session.timeout.ms}
 * @param maxMembersPerGroup      members (joined or holding a fresh member id) per group; more: GROUP_MAX_SIZE_REACHED
 * @param maxGroups               groups with members; a join that would create one more: COORDINATOR_NOT_AVAILABLE
 */
public record ClassicGroupLimits(int minSessionTimeoutMillis, int maxSessionTimeoutMillis, int maxMembersPerGroup,
                                 int maxGroups) {
    public static final ClassicGroupLimits DEFAULT = new ClassicGroupLimits(6_000, 1_800_000, 1_000, 10_000);

    public ClassicGroupLimits {
        if (minSessionTimeoutMillis < 1 || maxSessionTimeoutMillis < minSessionTimeoutMillis) {
            throw SluiceException.InvalidConfigException.of("classic group session timeout bounds",
                    minSessionTimeoutMillis + ".." + maxSessionTimeoutMillis, "must be 1 <= min <= max");
        }
        if (maxMembersPerGroup < 1) {
            throw SluiceException.InvalidConfigException.of("classic group maxMembersPerGroup", maxMembersPerGroup, "must be >= 1");
        }
        if (maxGroups < 1) {
            throw SluiceException.InvalidConfigException.of("classic group maxGroups", maxGroups, "must be >= 1");
        }
    }
}
