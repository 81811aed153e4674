package io.sluice.core.internal.group;

import io.sluice.core.ClassicGroups;
import io.sluice.core.ClassicGroups.JoinResult;
import io.sluice.core.ClassicGroups.Protocol;
import io.sluice.core.ClassicGroups.SyncResult;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/** One classic (client-side assignment) group's state. Guarded by the {@link GroupCoordinator}'s monitor. */
final class ClassicGroup {
    enum State {
        PREPARING_REBALANCE("PreparingRebalance"),
        COMPLETING_REBALANCE("CompletingRebalance"),
        STABLE("Stable");

        final String kafkaName;

        State(String kafkaName) {
            this.kafkaName = kafkaName;
        }
    }

    static final class Member {
        final String id;
        final String groupInstanceId;
        final String clientId;
        final String clientHost;
        List<Protocol> protocols;
        int sessionTimeoutMillis;
        int rebalanceTimeoutMillis;
        long lastSeenMillis;
        /** the pending JoinGroup long-poll, while this member waits for the rebalance to complete */
        CompletableFuture<JoinResult> awaitingJoin;
        /** the pending SyncGroup, while this member waits for the leader's assignment */
        CompletableFuture<SyncResult> awaitingSync;
        byte[] assignment = new byte[0];

        Member(String id, ClassicGroups.JoinRequest r, long now) {
            this.id = id;
            this.groupInstanceId = r.groupInstanceId();
            this.clientId = r.clientId();
            this.clientHost = r.clientHost();
            this.protocols = List.copyOf(r.protocols());
            this.sessionTimeoutMillis = r.sessionTimeoutMillis();
            this.rebalanceTimeoutMillis = r.rebalanceTimeoutMillis();
            this.lastSeenMillis = now;
        }

        byte[] metadata(String protocol) {
            for (Protocol p : protocols) {
                if (p.name().equals(protocol)) {
                    return p.metadata();
                }
            }
            return new byte[0];
        }

        boolean sameProtocols(List<Protocol> other) {
            if (other.size() != protocols.size()) {
                return false;
            }
            for (int i = 0; i < other.size(); i++) {
                if (!other.get(i).name().equals(protocols.get(i).name())
                        || !java.util.Arrays.equals(other.get(i).metadata(), protocols.get(i).metadata())) {
                    return false;
                }
            }
            return true;
        }

        /** A member in a pending request is waiting on the group, not silent: its session does not run. */
        boolean inRequest() {
            return awaitingJoin != null || awaitingSync != null;
        }
    }

    final String protocolType;
    State state = State.PREPARING_REBALANCE;
    int generation;
    String protocolName;
    String leaderId;
    /** in join order: the first member of a new generation's join becomes leader if the old leader is gone */
    final LinkedHashMap<String, Member> members = new LinkedHashMap<>();
    /** ids handed out with MEMBER_ID_REQUIRED, not joined yet → until when they may join (epoch millis) */
    final Map<String, Long> pendingMembers = new HashMap<>();
    /** when the current rebalance (join phase) or sync phase gives up on members that did not answer */
    long deadlineMillis = Long.MAX_VALUE;

    ClassicGroup(String protocolType, int generation) {
        this.protocolType = protocolType;
        this.generation = generation;
    }

    /** The protocols every member supports, in the order of the first member's preference. */
    Set<String> commonProtocols() {
        Set<String> common = null;
        for (Member m : members.values()) {
            Set<String> names = new LinkedHashSet<>();
            m.protocols.forEach(p -> names.add(p.name()));
            if (common == null) {
                common = names;
            } else {
                common.retainAll(names);
            }
        }
        return common == null ? Set.of() : common;
    }

    /** Kafka's rule: a joining member must share at least one protocol with all the members. */
    boolean supports(String type, List<Protocol> protocols) {
        if (!protocolType.equals(type) || protocols.isEmpty()) {
            return false;
        }
        if (members.isEmpty()) {
            return true;
        }
        Set<String> common = commonProtocols();
        for (Protocol p : protocols) {
            if (common.contains(p.name())) {
                return true;
            }
        }
        return false;
    }

    /** Each member votes for its most preferred protocol among those all support; most votes wins. */
    String selectProtocol() {
        Set<String> common = commonProtocols();
        Map<String, Integer> votes = new LinkedHashMap<>();
        common.forEach(p -> votes.put(p, 0));
        for (Member m : members.values()) {
            for (Protocol p : m.protocols) {
                if (common.contains(p.name())) {
                    votes.merge(p.name(), 1, Integer::sum);
                    break;
                }
            }
        }
        String best = null;
        int most = -1;
        for (Map.Entry<String, Integer> e : votes.entrySet()) {
            if (e.getValue() > most) {
                best = e.getKey();
                most = e.getValue();
            }
        }
        return best;
    }

    int maxRebalanceTimeoutMillis() {
        int max = 0;
        for (Member m : members.values()) {
            max = Math.max(max, m.rebalanceTimeoutMillis);
        }
        return max;
    }

    boolean allJoined() {
        if (!pendingMembers.isEmpty()) {
            return false;
        }
        for (Member m : members.values()) {
            if (m.awaitingJoin == null) {
                return false;
            }
        }
        return true;
    }

    List<String> memberIds() {
        return new ArrayList<>(members.keySet());
    }
}
