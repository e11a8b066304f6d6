//! Arena-linked lists: nodes live in a `Vec` and link by u32 index, so write buffers and the
//! mapping cache keep any number of recency lists over the same nodes without per-operation
//! allocation.

pub const NIL: u32 = u32::MAX;

/// prev/next links for every slot of an arena; several [`List`]s may share one `Links`.
#[derive(Clone, Debug, Default)]
pub struct Links {
    prev: Vec<u32>,
    next: Vec<u32>,
}

/// A doubly linked list over slots of a [`Links`]. Head = most recent (MRU), tail = LRU.
#[derive(Clone, Copy, Debug)]
pub struct List {
    pub head: u32,
    pub tail: u32,
    pub len: u32,
}

impl Default for List {
    fn default() -> Self {
        List {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

/// Link slot `i` in at the `end` of a list (`far` is its other end): `outward` is the link that
/// points past `end` (prev for the head, next for the tail), `inward` the one back into the list.
/// push_front and push_back are this one step, mirrored.
#[inline(always)]
fn link_at_end(outward: &mut [u32], inward: &mut [u32], end: &mut u32, far: &mut u32, i: u32) {
    outward[i as usize] = NIL;
    inward[i as usize] = *end;
    if *end != NIL {
        outward[*end as usize] = i;
    } else {
        *far = i;
    }
    *end = i;
}

impl Links {
    /// Make sure slot `i` exists.
    #[inline]
    pub fn ensure(&mut self, i: u32) {
        let need = i as usize + 1;
        if self.prev.len() < need {
            self.prev.resize(need, NIL);
            self.next.resize(need, NIL);
        }
    }
    #[inline]
    pub fn next(&self, i: u32) -> u32 {
        self.next[i as usize]
    }
    #[inline]
    pub fn prev(&self, i: u32) -> u32 {
        self.prev[i as usize]
    }

    // Always: on every buffered write of the block-grouped buffers, and the compiler's choice to
    // inline it or not has flipped with unrelated changes elsewhere in the crate.
    #[inline(always)]
    pub fn push_front(&mut self, l: &mut List, i: u32) {
        self.ensure(i);
        link_at_end(&mut self.prev, &mut self.next, &mut l.head, &mut l.tail, i);
        l.len += 1;
    }

    #[inline]
    pub fn push_back(&mut self, l: &mut List, i: u32) {
        self.ensure(i);
        link_at_end(&mut self.next, &mut self.prev, &mut l.tail, &mut l.head, i);
        l.len += 1;
    }

    #[inline]
    pub fn remove(&mut self, l: &mut List, i: u32) {
        let (p, n) = (self.prev[i as usize], self.next[i as usize]);
        if p != NIL {
            self.next[p as usize] = n;
        } else {
            l.head = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        } else {
            l.tail = p;
        }
        self.prev[i as usize] = NIL;
        self.next[i as usize] = NIL;
        l.len -= 1;
    }

    #[inline]
    pub fn move_to_front(&mut self, l: &mut List, i: u32) {
        if l.head != i {
            self.remove(l, i);
            self.push_front(l, i);
        }
    }

    #[inline]
    pub fn move_to_back(&mut self, l: &mut List, i: u32) {
        if l.tail != i {
            self.remove(l, i);
            self.push_back(l, i);
        }
    }
}

/// A node that keeps its own prev/next links beside its data, so a list step loads one cache line
/// (the page-level buffers' hot path). [`unlink`] and [`push_front`] work on a slice of them.
pub trait Linked {
    fn prev(&self) -> u32;
    fn next(&self) -> u32;
    fn set_prev(&mut self, i: u32);
    fn set_next(&mut self, i: u32);
}

/// Implement [`Linked`] for node types with `prev: u32` and `next: u32` fields.
macro_rules! linked {
    ($($t:ty),*) => {$(
        impl $crate::list::Linked for $t {
            #[inline(always)]
            fn prev(&self) -> u32 {
                self.prev
            }
            #[inline(always)]
            fn next(&self) -> u32 {
                self.next
            }
            #[inline(always)]
            fn set_prev(&mut self, i: u32) {
                self.prev = i;
            }
            #[inline(always)]
            fn set_next(&mut self, i: u32) {
                self.next = i;
            }
        }
    )*};
}
pub(crate) use linked;

/// Take node `i` out of the list `head`..`tail` of `nodes` (its own links are left as they were).
#[inline(always)]
pub fn unlink<N: Linked>(nodes: &mut [N], head: &mut u32, tail: &mut u32, i: u32) {
    let n = &nodes[i as usize];
    let (prev, next) = (n.prev(), n.next());
    if prev != NIL {
        nodes[prev as usize].set_next(next);
    } else {
        *head = next;
    }
    if next != NIL {
        nodes[next as usize].set_prev(prev);
    } else {
        *tail = prev;
    }
}

/// Put node `i` (in no list) at the head of the list `head`..`tail` of `nodes`.
#[inline(always)]
pub fn push_front<N: Linked>(nodes: &mut [N], head: &mut u32, tail: &mut u32, i: u32) {
    let old = *head;
    let n = &mut nodes[i as usize];
    n.set_prev(NIL);
    n.set_next(old);
    if old != NIL {
        nodes[old as usize].set_prev(i);
    } else {
        *tail = i;
    }
    *head = i;
}

/// Store `v` in a released slot of `items` (listed in `free`), else in a new one; returns the slot.
#[inline]
pub fn alloc<T>(items: &mut Vec<T>, free: &mut Vec<u32>, v: T) -> u32 {
    if let Some(i) = free.pop() {
        items[i as usize] = v;
        i
    } else {
        items.push(v);
        (items.len() - 1) as u32
    }
}

/// A slab of nodes with a free list of slot indexes.
#[derive(Clone, Debug)]
pub struct Slab<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            items: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    #[inline]
    pub fn insert(&mut self, v: T) -> u32 {
        alloc(&mut self.items, &mut self.free, v)
    }
    #[inline]
    pub fn release(&mut self, i: u32) {
        self.free.push(i);
    }
    #[inline]
    pub fn get(&self, i: u32) -> &T {
        &self.items[i as usize]
    }
    /// Start loading slot `i`.
    #[inline]
    pub fn prefetch(&self, i: u32) {
        crate::units::prefetch(&self.items, i as usize);
    }
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut T {
        &mut self.items[i as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(links: &Links, l: &List) -> Vec<u32> {
        let mut v = vec![];
        let mut c = l.head;
        while c != NIL {
            v.push(c);
            c = links.next(c);
        }
        v
    }

    #[test]
    fn list_ops() {
        let mut links = Links::default();
        let mut l = List::default();
        for i in 0..4 {
            links.push_front(&mut l, i);
        }
        assert_eq!(collect(&links, &l), vec![3, 2, 1, 0]);
        links.move_to_front(&mut l, 0);
        links.move_to_back(&mut l, 3);
        assert_eq!(collect(&links, &l), vec![0, 2, 1, 3]);
        links.remove(&mut l, 2);
        assert_eq!(collect(&links, &l), vec![0, 1, 3]);
        assert_eq!((l.head, l.tail, l.len), (0, 3, 3));
    }
}
