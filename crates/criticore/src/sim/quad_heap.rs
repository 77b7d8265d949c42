//! A 4-ary min-heap for the engine's small, hot queues (releases, ready jobs).
//! Half the depth of a binary heap, and the best of four children is picked
//! with selects rather than branches: a sift costs about one mispredicted
//! branch instead of one per level. Keys are unique in every use, so the
//! order things come out is the same as with any other min-heap.

#[derive(Debug, Clone)]
pub struct QuadHeap<T> {
    v: Vec<T>,
}

impl<T> Default for QuadHeap<T> {
    fn default() -> Self {
        QuadHeap { v: Vec::new() }
    }
}

impl<T: Ord + Copy> QuadHeap<T> {
    pub fn len(&self) -> usize {
        self.v.len()
    }

    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    #[inline]
    pub fn peek(&self) -> Option<&T> {
        self.v.first()
    }

    pub fn push(&mut self, x: T) {
        self.v.push(x);
        let mut i = self.v.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 4;
            if x >= self.v[parent] {
                break;
            }
            self.v[i] = self.v[parent];
            i = parent;
        }
        self.v[i] = x;
    }

    pub fn pop(&mut self) -> Option<T> {
        let last = self.v.pop()?;
        if self.v.is_empty() {
            return Some(last);
        }
        let top = self.v[0];
        self.sift_down(last);
        Some(top)
    }

    /// Take the smallest and put `x` in, in one sift; the heap must not be empty.
    pub fn replace_top(&mut self, x: T) -> T {
        let top = self.v[0];
        self.sift_down(x);
        top
    }

    /// Put `x` where the root was and move it down.
    fn sift_down(&mut self, x: T) {
        let n = self.v.len();
        let mut i = 0;
        loop {
            let first = 4 * i + 1;
            if first >= n {
                break;
            }
            let best = if first + 4 <= n {
                // All four children: a tournament of selects.
                let c = &self.v[first..first + 4];
                let a = if c[1] < c[0] { 1 } else { 0 };
                let b = if c[3] < c[2] { 3 } else { 2 };
                first + if c[b] < c[a] { b } else { a }
            } else {
                let mut best = first;
                for j in first + 1..n {
                    best = if self.v[j] < self.v[best] { j } else { best };
                }
                best
            };
            if self.v[best] >= x {
                break;
            }
            self.v[i] = self.v[best];
            i = best;
        }
        self.v[i] = x;
    }
}

impl<T: Ord + Copy> FromIterator<T> for QuadHeap<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut h = QuadHeap::default();
        for x in iter {
            h.push(x);
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::QuadHeap;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn pops_in_the_order_a_sort_gives() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut heap = QuadHeap::default();
        let mut model: Vec<u64> = Vec::new();
        // Random pushes, pops and replacements, checked against a sorted list.
        for _ in 0..20_000 {
            match rng.random_range(0..3) {
                0 => {
                    let x = rng.random_range(0..1_000_000);
                    heap.push(x);
                    model.push(x);
                }
                1 => {
                    model.sort_unstable();
                    let want = (!model.is_empty()).then(|| model.remove(0));
                    assert_eq!(heap.pop(), want);
                }
                _ if !model.is_empty() => {
                    let x = rng.random_range(0..1_000_000);
                    model.sort_unstable();
                    assert_eq!(heap.replace_top(x), model[0]);
                    model[0] = x;
                }
                _ => {}
            }
            assert_eq!(heap.len(), model.len());
            assert_eq!(heap.peek().copied(), model.iter().copied().min());
        }
    }
}
