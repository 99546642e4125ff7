//! Sector maps for one wave of one SM: the fills in flight ([`FillMap`]) and the stores an
//! access may merge into ([`SectorMap`]), open-addressed tables cleared by generation.

use super::*;

/// Sector -> cycle its fill arrives, for one wave of one SM ([`SmWork::global_sectors`]): a
/// [`SectorMap`] of chunks of [`CHUNK`] consecutive sectors, each with a bit per sector that has
/// a cycle and the cycles. The sectors of an access mostly share a few chunks (a coalesced
/// access one, a strided one a few), so an access costs a look-up per chunk and a bit or a store
/// per sector rather than a look-up per sector.
#[derive(Debug, Clone, Default)]
pub(super) struct FillMap {
    /// (chunk number, bit per sector with a cycle, generation) per slot, as [`SectorMap`]'s.
    pub(super) meta: Vec<(u64, u32, u32)>,
    /// The cycles of each slot's sectors (those without a bit hold anything).
    pub(super) cycles: Vec<[u32; CHUNK]>,
    /// The current generation (0 marks never-used slots, so it starts at 1).
    pub(super) generation: u32,
    /// Chunks held in this generation.
    pub(super) len: usize,
}

impl FillMap {
    /// First size (slots): a wave of strided loads touches a few hundred chunks.
    const MIN: usize = 512;

    /// Forgets every sector.
    pub(super) fn clear(&mut self) {
        self.len = 0;
        if next_generation(&mut self.generation) {
            self.meta.iter_mut().for_each(|s| s.2 = 0);
        }
    }

    /// The latest cycle of ascending, distinct `sectors`, 0 when none has one.
    #[inline]
    pub(super) fn latest(&self, sectors: &[u64]) -> u32 {
        if self.len == 0 {
            return 0;
        }
        let (meta, cycles, generation) = (&self.meta[..], &self.cycles[..], self.generation);
        let mut latest = 0;
        chunks(
            sectors,
            #[inline(always)]
            |chunk, bits| {
                if let (i, true) = probe(meta, generation, chunk) {
                    let have = bits & meta[i].1;
                    let c = &cycles[i];
                    if have.is_power_of_two() {
                        latest = latest.max(c[have.trailing_zeros() as usize % CHUNK]);
                    } else if have != 0 {
                        // Every lane, those without a bit as 0 (a few vector instructions).
                        let m = (0..CHUNK)
                            .map(|k| if have >> k & 1 != 0 { c[k] } else { 0 })
                            .max()
                            .unwrap_or(0);
                        latest = latest.max(m);
                    }
                }
            },
        );
        latest
    }

    /// Sets the cycle of each of ascending, distinct `sectors` that has none to `cycle`.
    #[inline]
    pub(super) fn insert_all_new(&mut self, sectors: &[u64], cycle: u32) {
        // One capacity check for at most a chunk per sector, then the table's fields in
        // registers.
        while 2 * (self.len + sectors.len()) > self.meta.len() {
            self.grow();
        }
        let generation = self.generation;
        let meta = &mut self.meta[..];
        let cycles = &mut self.cycles[..];
        let mut len = self.len;
        chunks(
            sectors,
            #[inline(always)]
            |chunk, bits| match probe(meta, generation, chunk) {
                (i, false) => {
                    meta[i] = (chunk, bits, generation);
                    // The lanes without a bit are never read: one store for all.
                    cycles[i] = [cycle; CHUNK];
                    len += 1;
                }
                (i, true) => {
                    let mut new = bits & !meta[i].1;
                    meta[i].1 |= new;
                    let c = &mut cycles[i];
                    while new != 0 {
                        c[new.trailing_zeros() as usize % CHUNK] = cycle;
                        new &= new - 1;
                    }
                }
            },
        );
        self.len = len;
    }

    /// The cycle of `sector`, if it has one.
    #[cfg(test)]
    pub(super) fn get(&self, sector: u64) -> Option<u32> {
        let (chunk, k) = (sector / CHUNK as u64, (sector % CHUNK as u64) as usize);
        if self.len == 0 {
            return None;
        }
        match probe(&self.meta, self.generation, chunk) {
            (i, true) if self.meta[i].1 >> k & 1 != 0 => Some(self.cycles[i][k]),
            _ => None,
        }
    }

    #[cold]
    pub(super) fn grow(&mut self) {
        let meta = std::mem::take(&mut self.meta);
        let cycles = std::mem::take(&mut self.cycles);
        let n = (2 * meta.len()).max(Self::MIN);
        self.meta = vec![(0, 0, 0); n];
        self.cycles = vec![[0; CHUNK]; n];
        let generation = self.generation.max(1);
        self.generation = generation;
        for (m, c) in meta.into_iter().zip(cycles) {
            if m.2 == generation {
                let (i, _) = probe(&self.meta, generation, m.0);
                self.meta[i] = m;
                self.cycles[i] = c;
            }
        }
    }
}

/// A map from sector numbers to cycles for one wave of one SM ([`SmWork::global_sectors`]):
/// open addressing with linear probing, emptied in one step per wave by a generation count
/// (a slot of an older generation is free), so a wave's lookups cost a multiply and a compare or
/// two instead of a general hash map's probe groups, and no wave clears its slots.
///
/// `MIN` is the table's first size (slots): a wave's misses in flight may be a few thousand
/// sectors, its stores a few hundred, and a table sized for them stays in the host's caches (a
/// wave's slots are spread over the whole table).
#[derive(Debug, Clone, Default)]
pub(super) struct SectorMap<const MIN: usize> {
    /// (sector, cycle, generation) per slot; a power of two of them, or none.
    pub(super) slots: Vec<(u64, u32, u32)>,
    /// The current generation (0 marks never-used slots, so it starts at 1).
    pub(super) generation: u32,
    /// Sectors held in this generation.
    pub(super) len: usize,
}

impl<const MIN: usize> SectorMap<MIN> {
    /// Forgets every sector.
    pub(super) fn clear(&mut self) {
        self.len = 0;
        if next_generation(&mut self.generation) {
            self.slots.iter_mut().for_each(|s| s.2 = 0);
        }
    }

    /// Where `sector` is, or the free slot where it would go (the table has a free slot).
    #[inline]
    pub(super) fn find(&self, sector: u64) -> (usize, bool) {
        probe(&self.slots, self.generation, sector)
    }

    /// The cycle of `sector`, if it has one.
    #[cfg(test)]
    pub(super) fn get(&self, sector: u64) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        match self.find(sector) {
            (i, true) => Some(self.slots[i].1),
            _ => None,
        }
    }

    /// Sets the cycle of `sector` to `cycle`; returns the one it had.
    #[cfg(test)]
    pub(super) fn insert(&mut self, sector: u64, cycle: u32) -> Option<u32> {
        self.reserve_for(1);
        self.insert_reserved(sector, cycle)
    }

    /// [`SectorMap::insert`] into a table with room for it ([`SectorMap::reserve_for`]).
    #[inline]
    pub(super) fn insert_reserved(&mut self, sector: u64, cycle: u32) -> Option<u32> {
        debug_assert!(2 * (self.len + 1) <= self.slots.len());
        let (i, found) = self.find(sector);
        let before = std::mem::replace(&mut self.slots[i], (sector, cycle, self.generation));
        if found {
            Some(before.1)
        } else {
            self.len += 1;
            None
        }
    }

    /// Sets the cycle of `sector` to `cycle` unless it has one.
    #[cfg(test)]
    pub(super) fn insert_new(&mut self, sector: u64, cycle: u32) {
        if self.get(sector).is_none() {
            self.insert(sector, cycle);
        }
    }

    /// Room for `n` more sectors, the table at most half full.
    #[inline]
    pub(super) fn reserve_for(&mut self, n: usize) {
        while 2 * (self.len + n) > self.slots.len() {
            self.grow();
        }
    }

    #[cold]
    pub(super) fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = vec![(0, 0, 0); (2 * old.len()).max(MIN)];
        let generation = self.generation.max(1);
        self.generation = generation;
        for (k, c, g) in old {
            if g == generation {
                let (i, _) = self.find(k);
                self.slots[i] = (k, c, g);
            }
        }
    }
}

/// Moves a table tagged by generation (a tag of another generation is an empty slot) on to the
/// next one, which forgets every entry at once. Returns true once in 2^32 clears, when the counter
/// wrapped: the old generations' tags could come back, so the caller zeroes them (0 marks
/// never-used slots, so the count goes on at 1).
pub(super) fn next_generation(generation: &mut u32) -> bool {
    *generation = generation.wrapping_add(1);
    if *generation == 0 {
        *generation = 1;
        return true;
    }
    false
}

/// Where `sector` is among `slots` (a power of two of them, one free) in generation
/// `generation`, or the free slot where it would go ([`SectorMap::find`]).
#[inline(always)]
pub(super) fn probe(slots: &[(u64, u32, u32)], generation: u32, sector: u64) -> (usize, bool) {
    let mask = slots.len() - 1;
    // Fibonacci hashing: consecutive sectors spread over the table.
    let mut i = (sector.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & mask;
    loop {
        let (k, _, g) = slots[i];
        if g != generation {
            return (i, false);
        }
        if k == sector {
            return (i, true);
        }
        i = (i + 1) & mask;
    }
}
