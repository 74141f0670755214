#include "nbrma/lock_manager.hpp"

namespace nbrma {

bool lock_manager::compatible(const lock_request &request) const
{
    if (request.exclusive)
        return !is_locked();
    return exclusive_holder_ < 0;
}

void lock_manager::grant_compatible(const std::function<bool(const lock_request &)> &may_grant,
                                    const std::function<bool(const lock_request &)> &acquire,
                                    const std::function<void(const lock_request &)> &grant)
{
    bool exclusive_waits = false;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
        const lock_request request = *it;
        if (!may_grant(request)) {
            ++it;
            continue;
        }
        if (!compatible(request) || (exclusive_waits && !request.exclusive) || !acquire(request)) {
            exclusive_waits = exclusive_waits || request.exclusive;
            ++it;
            continue;
        }
        if (request.exclusive)
            exclusive_holder_ = request.origin;
        else
            ++shared_holders_[request.origin];
        it = waiting_.erase(it);
        grant(request);
    }
}

bool lock_manager::release(int origin)
{
    if (exclusive_holder_ == origin) {
        exclusive_holder_ = -1;
        return true;
    }
    auto held = shared_holders_.find(origin);
    if (held == shared_holders_.end())
        return false;
    if (--held->second == 0)
        shared_holders_.erase(held);
    return true;
}

}  // namespace nbrma
