// A hash map of trivially copyable keys and values held in one array (open
// addressing, linear probing, deletion by backward shift), so that an insert
// and an erase allocate nothing once the array is large enough. The engine's
// map of the dones its exposure epochs expect was a std::unordered_map, which
// allocated and freed a node for every done: a PSCW round to my own rank
// spent about 250 of its 4,600 instructions in it (callgrind), and a
// stencil's round expects one done per neighbour. Allocates nothing before
// its first insert; grows to keep at most half of the array in use.
#ifndef NBRMA_FLAT_MAP_HPP
#define NBRMA_FLAT_MAP_HPP

#include <cstddef>
#include <type_traits>
#include <vector>

namespace nbrma {

// Hash must spread keys over the low bits of its result: the array index is
// the hash masked to the array's size (a power of two).
template <class Key, class Value, class Hash> class flat_map {
    static_assert(std::is_trivially_copyable<Key>::value && std::is_trivially_copyable<Value>::value,
                  "entries are moved by copying");

  public:
    std::size_t size() const { return count_; }
    bool empty() const { return count_ == 0; }
    std::size_t capacity_bytes() const { return table_.capacity() * sizeof(entry); }

    Value *find(const Key &key)
    {
        const std::size_t i = index_of(key);
        return i == npos ? nullptr : &table_[i].value;
    }

    const Value *find(const Key &key) const
    {
        const std::size_t i = index_of(key);
        return i == npos ? nullptr : &table_[i].value;
    }

    // The value of `key`, inserted value-initialized if it was not there.
    Value &operator[](const Key &key)
    {
        const std::size_t found = index_of(key);
        if (found != npos)
            return table_[found].value;
        if ((count_ + 1) * 2 > table_.size())
            grow();
        std::size_t i = home(key);
        while (table_[i].used)
            i = (i + 1) & mask();
        table_[i] = entry{key, Value(), true};
        ++count_;
        return table_[i].value;
    }

    // Whether `key` was there (and is gone now).
    bool erase(const Key &key)
    {
        const std::size_t i = index_of(key);
        if (i == npos)
            return false;
        erase_at(i);
        return true;
    }

    // Erase with one lookup: whether `key` was there, its value in *value.
    bool take(const Key &key, Value *value)
    {
        const std::size_t i = index_of(key);
        if (i == npos)
            return false;
        *value = table_[i].value;
        erase_at(i);
        return true;
    }

  private:
    struct entry {
        Key key;
        Value value;
        bool used;
    };

    static constexpr std::size_t npos = ~std::size_t{0};

    std::size_t mask() const { return table_.size() - 1; }
    std::size_t home(const Key &key) const { return Hash()(key) & mask(); }

    std::size_t index_of(const Key &key) const
    {
        if (count_ == 0)
            return npos;
        for (std::size_t i = home(key);; i = (i + 1) & mask()) {
            if (!table_[i].used)
                return npos;
            if (table_[i].key == key)
                return i;
        }
    }

    // Backward shift: an entry after the hole moves into it unless its home
    // lies cyclically in (hole, its place], where a lookup starting at its
    // home does not pass the hole.
    void erase_at(std::size_t hole)
    {
        for (std::size_t j = (hole + 1) & mask(); table_[j].used; j = (j + 1) & mask()) {
            const std::size_t h = home(table_[j].key);
            const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
            if (stays)
                continue;
            table_[hole] = table_[j];
            hole = j;
        }
        table_[hole].used = false;
        --count_;
    }

    void grow()
    {
        std::vector<entry> old(table_.size() ? table_.size() * 2 : 8, entry{Key(), Value(), false});
        old.swap(table_);
        count_ = 0;
        for (const entry &e : old)
            if (e.used)
                (*this)[e.key] = e.value;
    }

    std::vector<entry> table_;
    std::size_t count_ = 0;
};

}  // namespace nbrma

#endif
