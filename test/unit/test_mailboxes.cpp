// A window's mailboxes as each process sees them (formats/mailboxes.c),
// without MPI: the processes of a simulated window live in this test, each
// with its mailbox in memory of its own that the others "map" (a pointer),
// as ch4/mailbox/mailbox.c does with UCX. Which ranks have rings and in which
// order, sending to peers of the node only, the lock words, the readable
// pids, the doorbell that lets a poll skip the rings, a deliver error or a
// malformed ring that stops a poll, the list of windows, the mappings given
// back once, and random traffic against a model of one queue per sender.

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "mailboxes.h"

namespace {

struct Delivered {
    int to, from;
    uint8_t kind, arg;
    uint64_t value;
    bool operator==(const Delivered &o) const
    {
        return std::tie(to, from, kind, arg, value) ==
            std::tie(o.to, o.from, o.kind, o.arg, o.value);
    }
};

// what every process's deliver function saw, in order; fail_at: the number
// of the delivery (from 1) that returns `error`
struct Log {
    std::vector<Delivered> seen;
    int fail_at = 0, error = 0;
};

struct Ctx {
    Log *log;
    int me;
};

int deliver(void *ctx, int from, const nbrma_ring_msg_t *msg)
{
    Ctx *c = static_cast<Ctx *>(ctx);
    c->log->seen.push_back({c->me, from, msg->kind, msg->arg, msg->value});
    return int(c->log->seen.size()) == c->log->fail_at ? c->log->error : 0;
}

// the mappings a process holds: records of their own, counted when given back
std::map<const nbrma_kept_mapping *, int> unmapped;

void count_unmap(nbrma_kept_mapping *m)
{
    unmapped[m]++;
}

// A window of processes on the nodes node_of[]; each maps the mailbox of every
// peer that wants it unless `unmapped_pairs` says (sender, owner) is not
// mapped; pid of rank r: 1000 + r, readable when readable(r, peer).
struct World {
    std::vector<int> node_of;
    std::vector<nbrma_mailboxes_t *> m;
    std::vector<std::vector<uint64_t>> memory;
    std::vector<Ctx> ctx;
    std::vector<std::vector<char>> mapping_records;   // addresses stand for mappings
    Log log;

    template <typename Mapped, typename Readable>
    World(std::vector<int> nodes, Mapped mapped, Readable readable)
        : node_of(std::move(nodes)), m(node_of.size()), memory(node_of.size()),
          ctx(node_of.size()), mapping_records(node_of.size())
    {
        int n = int(node_of.size());
        for (int r = 0; r < n; r++) {
            ctx[r] = {&log, r};
            m[r] = nbrma_mailboxes_new(node_of.data(), n, r, deliver, &ctx[r]);
            EXPECT_NE(m[r], nullptr);
            memory[r].assign(nbrma_mailboxes_bytes(m[r]) / 8, 0xdeadbeef);
            nbrma_mailboxes_own(m[r], memory[r].data());
            mapping_records[r].resize(n);
        }
        for (int r = 0; r < n; r++)
            for (int peer = 0; peer < n; peer++)
                if (nbrma_mailboxes_wants(m[r], peer) && mapped(r, peer))
                    nbrma_mailboxes_mapped(
                        m[r], peer, m[peer]->mine,
                        reinterpret_cast<nbrma_kept_mapping *>(&mapping_records[r][peer]),
                        1000 + peer, readable(r, peer));
    }
    explicit World(std::vector<int> nodes)
        : World(std::move(nodes), [](int, int) { return true; }, [](int, int) { return true; })
    {
    }
    ~World()
    {
        for (nbrma_mailboxes_t *b : m)
            nbrma_mailboxes_free(b, count_unmap);
    }
    // wake_pid: whom the sender must wake (0: nobody)
    bool send(int from, int to, uint64_t value, uint8_t kind = 5, uint8_t arg = 9,
              uint64_t *wake_pid = nullptr, bool serves_peer = true)
    {
        nbrma_ring_msg_t msg{};
        msg.kind = kind;
        msg.arg = arg;
        msg.value = value;
        const bool sent = nbrma_mailboxes_send(m[from], to, &msg);
        const uint64_t wake = sent ? nbrma_mailboxes_owner_to_wake(m[from], to, serves_peer) : 0;
        if (wake_pid)
            *wake_pid = wake;
        else
            EXPECT_EQ(wake, 0u) << "nobody sleeps";
        return sent;
    }
};

}  // namespace

// A process has a ring for each process of its node, in rank order, and
// maps the mailbox of every other one of them; its mailbox is as long as
// its node's rings need.
TEST(Mailboxes, RingsAreThoseOfTheNodeInRankOrder)
{
    const std::vector<int> node_of = {7, 3, 7, 7, 3, -1, 7};
    nbrma_mailboxes_t *m = nbrma_mailboxes_new(node_of.data(), 7, 2, deliver, nullptr);
    ASSERT_NE(m, nullptr);

    EXPECT_EQ(m->nrings, 4);
    EXPECT_EQ(std::vector<int>(m->ring_of, m->ring_of + 7),
              (std::vector<int>{0, -1, 1, 2, -1, -1, 3}));
    EXPECT_EQ(std::vector<int>(m->rank_of_ring, m->rank_of_ring + 4),
              (std::vector<int>{0, 2, 3, 6}));
    EXPECT_EQ(nbrma_mailboxes_bytes(m), nbrma_mailbox_bytes(4));
    const bool wants[] = {true, false, false, true, false, false, true};
    for (int peer = 0; peer < 7; peer++)
        EXPECT_EQ(nbrma_mailboxes_wants(m, peer), wants[peer]) << "peer " << peer;
    EXPECT_EQ(m->mine, nullptr);
    EXPECT_EQ(nbrma_mailboxes_peers(m), 0);
    EXPECT_EQ(nbrma_mailboxes_readable_peers(m), 0);
    nbrma_mailboxes_free(m, count_unmap);

    // a process alone on its node: one ring, its own, and nobody to map
    m = nbrma_mailboxes_new(node_of.data(), 7, 5, deliver, nullptr);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->nrings, 1);
    EXPECT_EQ(m->rank_of_ring[0], 5);
    for (int peer = 0; peer < 7; peer++)
        EXPECT_FALSE(nbrma_mailboxes_wants(m, peer));
    nbrma_mailboxes_free(m, count_unmap);
}

TEST(Mailboxes, RandomNodesGiveRingsByRankOrderOnTheNode)
{
    std::mt19937 rng(321);
    for (int round = 0; round < 2000; round++) {
        int n = 1 + int(rng() % 40), me = int(rng() % n);
        std::vector<int> node_of(n);
        for (int &node : node_of)
            node = int(rng() % (1 + rng() % 5));
        nbrma_mailboxes_t *m = nbrma_mailboxes_new(node_of.data(), n, me, deliver, nullptr);
        ASSERT_NE(m, nullptr);
        int rings = 0;
        for (int r = 0; r < n; r++) {
            bool same = node_of[r] == node_of[me];
            ASSERT_EQ(m->ring_of[r], same ? rings : -1);
            if (same) {
                ASSERT_EQ(m->rank_of_ring[rings++], r);
            }
            ASSERT_EQ(nbrma_mailboxes_wants(m, r), same && r != me);
        }
        ASSERT_EQ(m->nrings, rings);
        nbrma_mailboxes_free(m, count_unmap);
    }
}

// A process without mailboxes (NULL) sends nothing, has no lock words and
// reads nobody.
TEST(Mailboxes, NoMailboxesAnswerNo)
{
    nbrma_ring_msg_t msg{};
    int arrived = 0;

    EXPECT_FALSE(nbrma_mailboxes_send(nullptr, 0, &msg));
    EXPECT_EQ(nbrma_mailboxes_owner_to_wake(nullptr, 0, true), 0u);
    EXPECT_EQ(nbrma_mailboxes_lock_word(nullptr, 0), nullptr);
    EXPECT_EQ(nbrma_mailboxes_readable_pid(nullptr, 0), 0u);
    EXPECT_EQ(nbrma_mailboxes_peers(nullptr), 0);
    EXPECT_EQ(nbrma_mailboxes_readable_peers(nullptr), 0);
    EXPECT_EQ(nbrma_mailboxes_poll(nullptr, &arrived), 0);
    EXPECT_EQ(arrived, 0);
    EXPECT_EQ(nbrma_mailboxes_poll_list(nullptr, &arrived), 0);
}

// A waiting poll reads a mailbox of two rings whatever its doorbell says, a
// larger one only once its doorbell moved; either way the doorbell counts as
// seen, so that the owner may sleep after it.
TEST(Mailboxes, AWaitingPollReadsASmallMailboxAndSeesItsDoorbell)
{
    World small({0, 0}), large({0, 0, 0});
    int arrived = 0;

    EXPECT_EQ(nbrma_mailboxes_poll_waiting(nullptr, &arrived), 0);
    ASSERT_TRUE(small.send(1, 0, 7, 5, 9));
    // the message without its doorbell: as a waiting poll may find it
    small.m[0]->mine->doorbell = 0;
    EXPECT_EQ(nbrma_mailboxes_poll(small.m[0], &arrived), 0);
    EXPECT_EQ(arrived, 0) << "the progress hook's poll asks the doorbell first";
    EXPECT_EQ(nbrma_mailboxes_poll_waiting(small.m[0], &arrived), 0);
    EXPECT_EQ(arrived, 1);
    EXPECT_EQ(small.log.seen.size(), 1u);
    EXPECT_TRUE(nbrma_mailboxes_sleep_list(small.m[0], NBRMA_MAILBOX_ASLEEP));
    nbrma_mailboxes_awake_list(small.m[0]);

    ASSERT_TRUE(large.send(1, 0, 8, 5, 9));
    large.m[0]->mine->doorbell = 0;
    arrived = 0;
    EXPECT_EQ(nbrma_mailboxes_poll_waiting(large.m[0], &arrived), 0);
    EXPECT_EQ(arrived, 0) << "three rings: the doorbell first";
    large.m[0]->mine->doorbell = 1;
    EXPECT_EQ(nbrma_mailboxes_poll_waiting(large.m[0], &arrived), 0);
    EXPECT_EQ(arrived, 1);
    EXPECT_TRUE(nbrma_mailboxes_sleep_list(large.m[0], NBRMA_MAILBOX_ASLEEP));
}

// Owning a mailbox empties it (a reused segment holds the last window's
// rings), and messages reach the owner's ring for their sender, each with
// the sender's rank; toward another node or oneself nothing is sent.
TEST(Mailboxes, MessagesReachTheOwnersRingOfTheirSender)
{
    World w({0, 1, 0, 0, 1});
    for (int r = 0; r < 5; r++)
        for (uint64_t word : w.memory[r])
            ASSERT_EQ(word, 0u);

    EXPECT_TRUE(w.send(3, 0, 30, 1, 2));
    EXPECT_TRUE(w.send(2, 0, 20, 3, 4));
    EXPECT_TRUE(w.send(3, 0, 31, 5, 6));
    EXPECT_TRUE(w.send(4, 1, 41));
    EXPECT_FALSE(w.send(0, 1, 1)) << "another node";
    EXPECT_FALSE(w.send(0, 0, 1)) << "oneself";
    EXPECT_EQ(nbrma_mailbox_doorbell(w.m[0]->mine), 3u);
    EXPECT_EQ(w.m[0]->mine->ring[2].slot[0].value, 30u) << "rank 3 writes ring 2 of node 0";

    int arrived = 0;
    EXPECT_EQ(nbrma_mailboxes_poll(w.m[0], &arrived), 0);
    EXPECT_EQ(arrived, 1);
    // ring order (rank 2's ring before rank 3's), each ring in order
    EXPECT_EQ(w.log.seen, (std::vector<Delivered>{{0, 2, 3, 4, 20}, {0, 3, 1, 2, 30},
                                                  {0, 3, 5, 6, 31}}));
    w.log.seen.clear();
    EXPECT_EQ(nbrma_mailboxes_poll(w.m[1], nullptr), 0);
    EXPECT_EQ(w.log.seen, (std::vector<Delivered>{{1, 4, 5, 9, 41}}));

    EXPECT_EQ(nbrma_mailboxes_peers(w.m[0]), 2);
    EXPECT_EQ(nbrma_mailboxes_peers(w.m[4]), 1);
}

// The lock word of my window is in my mailbox, a peer's in the peer's, where
// it is mapped here; otherwise the lock goes by message.
TEST(Mailboxes, LockWordsAreInTheOwnersMailbox)
{
    // rank 1 does not map rank 2's mailbox (UCX gave no pointer)
    World w({0, 0, 0, 1}, [](int r, int peer) { return !(r == 1 && peer == 2); },
            [](int, int) { return true; });

    EXPECT_EQ(nbrma_mailboxes_lock_word(w.m[1], 1), &w.m[1]->mine->lock);
    EXPECT_EQ(nbrma_mailboxes_lock_word(w.m[1], 0), &w.m[0]->mine->lock);
    EXPECT_EQ(nbrma_mailboxes_lock_word(w.m[0], 1), &w.m[1]->mine->lock);
    EXPECT_EQ(nbrma_mailboxes_lock_word(w.m[1], 2), nullptr);
    EXPECT_EQ(nbrma_mailboxes_lock_word(w.m[2], 1), &w.m[1]->mine->lock);
    EXPECT_EQ(nbrma_mailboxes_lock_word(w.m[1], 3), nullptr);
    EXPECT_EQ(nbrma_mailboxes_lock_word(w.m[3], 3), &w.m[3]->mine->lock);
    EXPECT_FALSE(w.send(1, 2, 7));
    EXPECT_TRUE(w.send(2, 1, 7));
    EXPECT_EQ(nbrma_mailboxes_peers(w.m[1]), 1);
    EXPECT_EQ(nbrma_mailboxes_peers(w.m[2]), 2);
}

// A peer's memory is readable under its pid where the probe read back; a
// mapping without a pid counts as mapped, not readable.
TEST(Mailboxes, ReadablePidsOnlyOfMappedPeers)
{
    World w({0, 0, 0, 0, 1}, [](int r, int peer) { return !(r == 0 && peer == 3); },
            [](int r, int peer) { return !(r == 0 && peer == 2); });

    EXPECT_EQ(nbrma_mailboxes_readable_pid(w.m[0], 1), 1001u);
    EXPECT_EQ(nbrma_mailboxes_readable_pid(w.m[0], 2), 0u) << "mapped, probe failed";
    EXPECT_EQ(nbrma_mailboxes_readable_pid(w.m[0], 3), 0u) << "not mapped";
    EXPECT_EQ(nbrma_mailboxes_readable_pid(w.m[0], 4), 0u) << "another node";
    EXPECT_EQ(nbrma_mailboxes_readable_pid(w.m[0], 0), 0u) << "myself";
    EXPECT_EQ(nbrma_mailboxes_peers(w.m[0]), 2);
    EXPECT_EQ(nbrma_mailboxes_readable_peers(w.m[0]), 1);
    EXPECT_EQ(nbrma_mailboxes_peers(w.m[1]), 3);
    EXPECT_EQ(nbrma_mailboxes_readable_peers(w.m[1]), 3);
    EXPECT_EQ(nbrma_mailboxes_readable_pid(w.m[3], 0), 1000u);
    EXPECT_EQ(nbrma_mailboxes_peers(w.m[4]), 0);
}

// A full ring refuses (the caller sends an active message) until its owner
// reads; the other rings of the same mailbox are not affected.
TEST(Mailboxes, AFullRingRefusesUntilItsOwnerReads)
{
    World w({0, 0, 0});
    for (uint64_t v = 0; v < NBRMA_RING_SLOTS; v++)
        ASSERT_TRUE(w.send(1, 0, v));
    EXPECT_FALSE(w.send(1, 0, 99));
    EXPECT_TRUE(w.send(2, 0, 200));
    EXPECT_EQ(nbrma_mailboxes_poll(w.m[0], nullptr), 0);
    EXPECT_EQ(w.log.seen.size(), size_t(NBRMA_RING_SLOTS) + 1);
    EXPECT_EQ(w.log.seen.back().from, 2);
    EXPECT_TRUE(w.send(1, 0, 100));
}

// A poll looks at the rings only when the doorbell moved since the last
// one: a stamp written without ringing waits for the next ring.
TEST(Mailboxes, APollReadsOnlyAfterTheDoorbellMoved)
{
    World w({0, 0});
    int arrived = 0;

    EXPECT_EQ(nbrma_mailboxes_poll(w.m[0], &arrived), 0);
    nbrma_ring_t *ring = &w.m[0]->mine->ring[1];
    ring->slot[0].value = 77;
    ring->slot[0].stamp = uint64_t(1) << 16 | 4 << 8 | 2;   // message 0, no doorbell
    EXPECT_EQ(nbrma_mailboxes_poll(w.m[0], &arrived), 0);
    EXPECT_EQ(arrived, 0);
    EXPECT_TRUE(w.log.seen.empty());
    // nbrma_mailboxes_read reads regardless (what poll does once it rang)
    EXPECT_EQ(nbrma_mailboxes_read(w.m[0], &arrived), 0);
    EXPECT_EQ(arrived, 1);
    ASSERT_EQ(w.log.seen.size(), 1u);
    EXPECT_EQ(w.log.seen[0], (Delivered{0, 1, 4, 2, 77}));
    // the sender's next message rings it: read at the next poll
    w.m[1]->peer[0].sender.sent = 1;
    w.m[1]->peer[0].sender.known_consumed = 1;
    EXPECT_TRUE(w.send(1, 0, 78));
    EXPECT_EQ(nbrma_mailboxes_poll(w.m[0], nullptr), 0);
    ASSERT_EQ(w.log.seen.size(), 2u);
    EXPECT_EQ(w.log.seen[1].value, 78u);
}

// An MPI error from deliver stops the poll there and is returned; what is
// left is read once the doorbell moves again, in order.
TEST(Mailboxes, ADeliverErrorStopsThePoll)
{
    World w({0, 0, 0});
    w.log.fail_at = 2;
    w.log.error = 17;
    ASSERT_TRUE(w.send(1, 0, 1));
    ASSERT_TRUE(w.send(1, 0, 2));
    ASSERT_TRUE(w.send(1, 0, 3));
    ASSERT_TRUE(w.send(2, 0, 4));
    int arrived = 0;
    EXPECT_EQ(nbrma_mailboxes_poll(w.m[0], &arrived), 17);
    EXPECT_EQ(arrived, 1);
    EXPECT_EQ(w.log.seen.size(), 2u);
    EXPECT_EQ(nbrma_mailboxes_poll(w.m[0], nullptr), 0) << "doorbell seen already";
    EXPECT_EQ(w.log.seen.size(), 2u);
    ASSERT_TRUE(w.send(2, 0, 5));
    EXPECT_EQ(nbrma_mailboxes_poll(w.m[0], nullptr), 0);
    std::vector<uint64_t> values;
    for (const Delivered &d : w.log.seen)
        values.push_back(d.value);
    EXPECT_EQ(values, (std::vector<uint64_t>{1, 2, 3, 4, 5}));
}

// A stamp no sender writes (a misbehaving peer) stops the poll after what
// came before it in ring order; that ring is left as it was.
TEST(Mailboxes, AMalformedRingStopsThePollThere)
{
    World w({0, 0, 0, 0});
    ASSERT_TRUE(w.send(1, 0, 10));
    ASSERT_TRUE(w.send(3, 0, 30));
    nbrma_ring_t *ring = &w.m[0]->mine->ring[2];
    ring->slot[0].stamp = uint64_t(3) << 16;   // message 2 where 0 is due
    w.m[0]->mine->doorbell++;
    EXPECT_EQ(nbrma_mailboxes_poll(w.m[0], nullptr), NBRMA_RING_MALFORMED);
    ASSERT_EQ(w.log.seen.size(), 1u);
    EXPECT_EQ(w.log.seen[0].from, 1);
    EXPECT_EQ(ring->consumed, 0u);
    EXPECT_EQ(nbrma_mailboxes_read(w.m[0], nullptr), NBRMA_RING_MALFORMED) << "still there";
    EXPECT_EQ(w.log.seen.size(), 1u) << "rank 3's ring comes after it";
}

// The list of windows' mailboxes: newest first, polled in order until one
// fails; unlinking says whether any is left.
TEST(Mailboxes, TheListIsPolledInOrderUntilAnError)
{
    World a({0, 0}), b({0, 0});
    nbrma_mailboxes_t *list = nullptr;

    nbrma_mailboxes_link(&list, a.m[0]);
    nbrma_mailboxes_link(&list, b.m[0]);
    EXPECT_EQ(list, b.m[0]);
    EXPECT_EQ(list->next, a.m[0]);
    ASSERT_TRUE(a.send(1, 0, 1));
    ASSERT_TRUE(b.send(1, 0, 2));
    b.log.fail_at = 1;
    b.log.error = 5;
    int arrived = 0;
    EXPECT_EQ(nbrma_mailboxes_poll_list(list, &arrived), 5);
    EXPECT_EQ(arrived, 1);
    EXPECT_EQ(b.log.seen.size(), 1u);
    EXPECT_TRUE(a.log.seen.empty()) << "after the failing one";
    EXPECT_EQ(nbrma_mailboxes_poll_list(list, nullptr), 0);
    EXPECT_EQ(a.log.seen.size(), 1u);

    nbrma_mailboxes_t *absent = a.m[1];
    EXPECT_TRUE(nbrma_mailboxes_unlink(&list, absent));
    EXPECT_TRUE(nbrma_mailboxes_unlink(&list, b.m[0]));
    EXPECT_EQ(list, a.m[0]);
    EXPECT_FALSE(nbrma_mailboxes_unlink(&list, a.m[0]));
    EXPECT_EQ(list, nullptr);
    EXPECT_FALSE(nbrma_mailboxes_unlink(&list, a.m[0])) << "an empty list stays empty";
}

// An owner whose agent sleeps is woken by the first sender after it said so,
// with the owner's pid, and by nobody after that until it sleeps again; it
// cannot say so while a message waits unread in any mailbox of its list, nor
// after it woke.
// Rank 0 of two windows, of 3 and of 2 processes on one node, with both
// mailboxes in one list as a process links its windows'.
struct TwoWindows {
    World a{{0, 0, 0}}, b{{0, 0}};
    nbrma_mailboxes_t *list = nullptr;
    TwoWindows()
    {
        nbrma_mailboxes_link(&list, a.m[0]);
        nbrma_mailboxes_link(&list, b.m[0]);
    }
};

TEST(Mailboxes, ASleepingOwnerIsWokenOnceByTheFirstSender)
{
    TwoWindows two;
    World &a = two.a, &b = two.b;
    nbrma_mailboxes_t *list = two.list;
    uint64_t wake_pid = 0;

    EXPECT_TRUE(nbrma_mailboxes_sleep_list(list, NBRMA_MAILBOX_ASLEEP));
    ASSERT_TRUE(a.send(1, 0, 1, 5, 9, &wake_pid));
    EXPECT_EQ(wake_pid, 1000u) << "rank 0's pid";
    ASSERT_TRUE(a.send(2, 0, 2, 5, 9, &wake_pid));
    EXPECT_EQ(wake_pid, 0u) << "woken already";
    ASSERT_TRUE(b.send(1, 0, 3, 5, 9, &wake_pid));
    EXPECT_EQ(wake_pid, 1000u) << "each mailbox asked";
    ASSERT_TRUE(a.send(0, 1, 4, 5, 9, &wake_pid));
    EXPECT_EQ(wake_pid, 0u) << "rank 1 does not sleep";

    // unread messages: no sleep, and no wish left behind
    EXPECT_FALSE(nbrma_mailboxes_sleep_list(list, NBRMA_MAILBOX_ASLEEP));
    EXPECT_EQ(a.m[0]->mine->asleep, 0u);
    EXPECT_EQ(b.m[0]->mine->asleep, 0u);
    EXPECT_EQ(nbrma_mailboxes_poll_list(list, nullptr), 0);
    EXPECT_EQ(a.log.seen.size(), 2u);
    EXPECT_TRUE(nbrma_mailboxes_sleep_list(list, NBRMA_MAILBOX_ASLEEP));
    nbrma_mailboxes_awake_list(list);
    ASSERT_TRUE(a.send(1, 0, 5, 5, 9, &wake_pid));
    EXPECT_EQ(wake_pid, 0u) << "awake again";
    EXPECT_TRUE(nbrma_mailboxes_sleep_list(nullptr, NBRMA_MAILBOX_ASLEEP))
        << "no mailboxes: nothing to read";

    // away (P10): an operation's sender wakes the owner once per mailbox
    EXPECT_EQ(nbrma_mailboxes_poll_list(list, nullptr), 0);
    EXPECT_TRUE(nbrma_mailboxes_sleep_list(list, NBRMA_MAILBOX_ASLEEP_AWAY));
    auto away_to_wake = [](nbrma_mailboxes_t *m, int peer) {
        nbrma_mailbox_peer_t *p = nbrma_mailboxes_peer(m, peer);
        return p && nbrma_mailbox_away_owner_to_wake(p->box) ? p->pid : 0;
    };
    EXPECT_EQ(away_to_wake(a.m[1], 0), 1000u) << "rank 0's pid";
    EXPECT_EQ(away_to_wake(a.m[2], 0), 0u) << "woken already";
    EXPECT_EQ(away_to_wake(a.m[0], 1), 0u) << "rank 1 does not sleep";
    // the application back in MPI takes the other marks back
    nbrma_mailboxes_unmark_away_list(list);
    EXPECT_EQ(away_to_wake(b.m[1], 0), 0u);
    ASSERT_TRUE(b.send(1, 0, 6, 5, 9, &wake_pid));
    EXPECT_EQ(wake_pid, 0u) << "no mark left";
}

// An agent without work of its own sleeps for what serves a peer only: a
// message of the owner's own synchronization leaves it asleep and unread;
// when the application starts work of its own, every mailbox of the list is
// marked for every message, and the caller reads what came meanwhile.
TEST(Mailboxes, AnOwnerAsleepForPeersIsWokenForEverythingOnceItsOwnWorkBegins)
{
    TwoWindows two;
    World &a = two.a, &b = two.b;
    nbrma_mailboxes_t *list = two.list;
    uint64_t wake_pid = 0;

    EXPECT_FALSE(nbrma_mailboxes_wake_for_all_list(list)) << "nobody asleep";
    EXPECT_TRUE(nbrma_mailboxes_sleep_list(list, NBRMA_MAILBOX_ASLEEP_FOR_PEERS));
    ASSERT_TRUE(a.send(1, 0, 1, 5, 9, &wake_pid, false));
    EXPECT_EQ(wake_pid, 0u) << "a done or a grant lets it sleep";
    EXPECT_TRUE(nbrma_mailboxes_wake_for_all_list(list));
    EXPECT_EQ(a.m[0]->mine->asleep, NBRMA_MAILBOX_ASLEEP);
    EXPECT_EQ(b.m[0]->mine->asleep, NBRMA_MAILBOX_ASLEEP);
    EXPECT_EQ(nbrma_mailboxes_poll_list(list, nullptr), 0);
    EXPECT_EQ(a.log.seen.size(), 1u) << "what came while marked for peers is read";
    ASSERT_TRUE(b.send(1, 0, 2, 5, 9, &wake_pid, false));
    EXPECT_EQ(wake_pid, 1000u) << "now any message wakes it";
    EXPECT_FALSE(nbrma_mailboxes_wake_for_all_list(list));
    // a message that serves its sender wakes it in either mark
    EXPECT_EQ(nbrma_mailboxes_poll_list(list, nullptr), 0);
    EXPECT_TRUE(nbrma_mailboxes_sleep_list(list, NBRMA_MAILBOX_ASLEEP_FOR_PEERS));
    ASSERT_TRUE(a.send(2, 0, 3, 5, 9, &wake_pid, true));
    EXPECT_EQ(wake_pid, 1000u);
}

// P10 arms the UCX workers too unless every window's mailbox reaches all of
// its peers: one whose peers are all on this node and mapped counts, one with
// a peer on another node or one not mapped here does not.
TEST(Mailboxes, ReachingAllCountsTheWindowsWhosePeersAllWriteToTheirMailbox)
{
    World one_node({0, 0, 0}), two_nodes({0, 0, 1});
    World unmapped_pair({0, 0, 0}, [](int r, int peer) { return !(r == 0 && peer == 2); },
                        [](int, int) { return false; });
    nbrma_mailboxes_t *list = nullptr;

    EXPECT_EQ(nbrma_mailboxes_reaching_all_list(list), 0);
    nbrma_mailboxes_link(&list, one_node.m[0]);
    EXPECT_EQ(nbrma_mailboxes_reaching_all_list(list), 1);
    nbrma_mailboxes_link(&list, two_nodes.m[0]);
    EXPECT_EQ(nbrma_mailboxes_reaching_all_list(list), 1) << "rank 2 is on another node";
    nbrma_mailboxes_link(&list, unmapped_pair.m[0]);
    EXPECT_EQ(nbrma_mailboxes_reaching_all_list(list), 1) << "rank 0 does not map rank 2's";
    nbrma_mailboxes_t *others = nullptr;
    nbrma_mailboxes_link(&others, unmapped_pair.m[1]);
    EXPECT_EQ(nbrma_mailboxes_reaching_all_list(others), 1) << "rank 1 maps both";
}

// Freeing gives back each mapping once, and only mappings.
TEST(Mailboxes, FreeGivesBackEachMappingOnce)
{
    unmapped.clear();
    std::vector<const nbrma_kept_mapping *> held;
    {
        World w({0, 1, 0, 0, 1, 0}, [](int r, int peer) { return (r + peer) % 3 != 0; },
                [](int, int) { return false; });
        for (int r = 0; r < 6; r++)
            for (int ring = 0; ring < w.m[r]->nrings; ring++)
                if (w.m[r]->peer[ring].mapping)
                    held.push_back(w.m[r]->peer[ring].mapping);
        int mapped = 0;
        for (int r = 0; r < 6; r++)
            mapped += nbrma_mailboxes_peers(w.m[r]);
        EXPECT_EQ(size_t(mapped), held.size());
        EXPECT_TRUE(unmapped.empty());
    }
    EXPECT_EQ(unmapped.size(), held.size());
    for (const nbrma_kept_mapping *m : held)
        EXPECT_EQ(unmapped[m], 1);
}

// Random windows, random traffic: each send succeeds exactly when the model
// says (same node, not oneself, mapped, fewer than NBRMA_RING_SLOTS unread
// from that sender), and each poll delivers the model's queues in ring
// order, each in the order sent.
TEST(Mailboxes, RandomTrafficMatchesOneQueuePerSender)
{
    std::mt19937_64 rng(2024);
    for (int round = 0; round < 300; round++) {
        int n = 1 + int(rng() % 9);
        std::vector<int> nodes(n);
        for (int &node : nodes)
            node = int(rng() % 3);
        std::vector<std::vector<bool>> maps(n, std::vector<bool>(n));
        for (auto &row : maps)
            for (size_t i = 0; i < row.size(); i++)
                row[i] = rng() % 5 != 0;
        World w(nodes, [&](int r, int peer) { return bool(maps[r][peer]); },
                [](int, int) { return true; });
        // queue[owner][sender]
        std::vector<std::vector<std::deque<Delivered>>> queue(
            n, std::vector<std::deque<Delivered>>(n));
        for (int step = 0; step < 400; step++) {
            int a = int(rng() % n), b = int(rng() % n);
            if (rng() % 3) {
                uint64_t value = rng();
                uint8_t kind = uint8_t(rng()), arg = uint8_t(rng());
                bool can = nodes[a] == nodes[b] && a != b && maps[a][b] &&
                    queue[b][a].size() < NBRMA_RING_SLOTS;
                ASSERT_EQ(w.send(a, b, value, kind, arg), can) << a << " -> " << b;
                if (can)
                    queue[b][a].push_back({b, a, kind, arg, value});
            } else {
                std::vector<Delivered> expect;
                for (int sender = 0; sender < n; sender++) {     // rank order = ring order
                    expect.insert(expect.end(), queue[a][sender].begin(), queue[a][sender].end());
                    queue[a][sender].clear();
                }
                w.log.seen.clear();
                int arrived = 0;
                ASSERT_EQ(nbrma_mailboxes_poll(w.m[a], &arrived), 0);
                ASSERT_EQ(arrived, expect.empty() ? 0 : 1);
                ASSERT_EQ(w.log.seen, expect);
            }
        }
    }
}
