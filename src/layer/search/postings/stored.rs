//! A server's postings kept on disk between runs, so that the next start answers its first
//! search from them instead of reading every object (see adr-0099).
//!
//! One file, written whole and renamed into place. Little-endian throughout:
//!
//! ```text
//! header     magic "mjpost", format, build version, seed, counts, the generation's stamp,
//!            directory sum, header sum
//! directory  a key per object (its searched fields hashed with the seed), its body length,
//!            each term's end and postings start, a sum per block of postings, the terms
//! postings   8 bytes each (position, packed counts), read a term at a time when searched
//! ```
//!
//! The header and directory (a few MB) are read and checked at once; a term's postings are read
//! when a search asks for them and their blocks checked then. A file that is short, long,
//! foreign, of another format or build, or whose sums disagree is refused: a search never
//! answers from bytes this program did not write for these objects.

use std::fs::File;
use std::hash::{BuildHasher, Hash, Hasher};
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

use super::{Posting, Prepared};
use crate::layer::object::Object;
use crate::layer::search::Corpus;

const MAGIC: &[u8; 8] = b"mjpost\0\0";
/// Bumped whenever what a term, a count or this layout is changes.
const FORMAT: u32 = 1;
const HEADER: usize = 112;
/// Postings per checked block: 64 KiB.
const BLOCK: usize = 8192;
/// A directory larger than this is not read: no layer this program serves has one near it.
const MAX_DIRECTORY: u64 = 1 << 30;

/// Why a stored file was not used; its word goes in the log line.
#[derive(Debug, thiserror::Error)]
pub enum StoredError {
    #[error("cannot read it: {0}")]
    Io(#[from] io::Error),
    #[error("it is not a postings file of this format")]
    Foreign,
    #[error("it was written by another build")]
    OtherBuild,
    #[error("its length is not what its header says")]
    Length,
    #[error("its checksum does not match its bytes")]
    Checksum,
    #[error("its directory is inconsistent")]
    Inconsistent,
    #[error("it is larger than any layer's")]
    Oversized,
}

impl StoredError {
    /// The one word the log line names the refusal by.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            StoredError::Io(_) => "io",
            StoredError::Foreign => "foreign",
            StoredError::OtherBuild => "other_build",
            StoredError::Length => "length",
            StoredError::Checksum => "checksum",
            StoredError::Inconsistent => "inconsistent",
            StoredError::Oversized => "oversized",
        }
    }
}

fn state(seed: u64) -> foldhash::quality::FixedState {
    foldhash::quality::FixedState::with_seed(seed)
}

fn sum(seed: u64, bytes: &[u8]) -> u64 {
    let mut h = state(seed).build_hasher();
    h.write(bytes);
    h.finish()
}

/// This build's name, so that a file another build wrote (whose terms may differ) is refused.
fn build_version() -> u64 {
    sum(0, env!("CARGO_PKG_VERSION").as_bytes())
}

/// One object's key: every field its postings are made from, hashed with the file's seed; its
/// text is named by `file`, the digest of its file's stamp when the index trusts that stamp
/// (not racy), else hashed whole. An object whose key is unchanged has the postings it had.
pub fn key(seed: u64, o: &Object, file: Option<u64>) -> u64 {
    let mut h = state(seed).build_hasher();
    o.uri.hash(&mut h);
    o.kind.hash(&mut h);
    o.identity.hash(&mut h);
    o.title.hash(&mut h);
    o.description.hash(&mut h);
    o.tags.hash(&mut h);
    o.metadata.as_json().hash(&mut h);
    o.media_type.hash(&mut h);
    o.content.len().hash(&mut h);
    match file {
        Some(stamp) => {
            h.write_u8(1);
            o.provenance.path.hash(&mut h);
            h.write_u64(stamp);
        }
        None => {
            h.write_u8(0);
            o.content.hash(&mut h);
        }
    }
    h.finish()
}

/// The keys of the objects of `corpus` from position `from` on (see [`key`]), split across the
/// cores.
pub fn keys(
    seed: u64,
    corpus: Corpus<'_>,
    from: usize,
    file: impl Fn(&Object) -> Option<u64> + Sync,
) -> Vec<u64> {
    let positions: Vec<usize> = (from.min(corpus.len())..corpus.len()).collect();
    let threads = crate::layer::parallel::threads_for(positions.len(), 4096);
    crate::layer::parallel::in_parts(&positions, threads, |part| {
        part.iter()
            .map(|&p| key(seed, &corpus[p], file(&corpus[p])))
            .collect::<Vec<u64>>()
    })
    .concat()
}

/// A digest of `stamp` for [`key`], with the file's seed.
pub fn stamp_digest(seed: u64, stamp: &impl Hash) -> u64 {
    state(seed).hash_one(stamp)
}

/// Postings read from the stored file on demand.
#[derive(Debug)]
pub struct OnDisk {
    file: File,
    /// Where it was read from: removed when a block turns out damaged, so that the next start
    /// makes the postings again.
    path: std::path::PathBuf,
    seed: u64,
    /// Where the postings start in the file.
    at: u64,
    count: usize,
    objects: usize,
    block_sums: Box<[u64]>,
}

impl OnDisk {
    /// The postings `from..to`, their blocks checked.
    pub(crate) fn read(&self, from: usize, to: usize) -> Result<Vec<Posting>, StoredError> {
        if from >= to {
            return Ok(Vec::new());
        }
        if to > self.count {
            return Err(StoredError::Inconsistent);
        }
        let first = from / BLOCK;
        let last = (to - 1) / BLOCK;
        let start = first * BLOCK;
        let end = ((last + 1) * BLOCK).min(self.count);
        let mut bytes = vec![0u8; (end - start) * 8];
        read_at(&self.file, &mut bytes, self.at + start as u64 * 8)?;
        for (b, chunk) in (first..=last).zip(bytes.chunks(BLOCK * 8)) {
            if sum(self.seed, chunk) != self.block_sums[b] {
                self.forget();
                return Err(StoredError::Checksum);
            }
        }
        let wanted = &bytes[(from - start) * 8..(to - start) * 8];
        let mut out = Vec::with_capacity(to - from);
        for p in wanted.chunks_exact(8) {
            let position = u32::from_le_bytes([p[0], p[1], p[2], p[3]]);
            if position as usize >= self.objects {
                self.forget();
                return Err(StoredError::Inconsistent);
            }
            out.push(Posting {
                position,
                packed: u32::from_le_bytes([p[4], p[5], p[6], p[7]]),
            });
        }
        Ok(out)
    }

    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Removes the damaged file, unless another run has replaced it since it was read.
    fn forget(&self) {
        let same = match (std::fs::metadata(&self.path), self.file.metadata()) {
            #[cfg(unix)]
            (Ok(now), Ok(read)) => {
                use std::os::unix::fs::MetadataExt;
                now.ino() == read.ino() && now.dev() == read.dev()
            }
            #[cfg(not(unix))]
            (Ok(_), Ok(_)) => true,
            _ => false,
        };
        if same {
            crate::write::remove_damaged_cache(&self.path);
        }
    }
}

#[cfg(unix)]
fn read_at(file: &File, into: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, into, offset)
}

#[cfg(not(unix))]
fn read_at(file: &File, into: &mut [u8], offset: u64) -> io::Result<()> {
    use std::io::Seek;
    let mut file = file;
    file.seek(io::SeekFrom::Start(offset))?;
    file.read_exact(into)
}

/// A stored file, checked: its objects' keys (with the seed they were made with) and its
/// postings, which read their lists from the file.
#[derive(Debug)]
pub struct Loaded {
    pub seed: u64,
    /// The stamp of the generation the postings were made of, when every file's stamp in it
    /// could be trusted; zeros otherwise.
    pub generation: [u8; 32],
    pub keys: Vec<u64>,
    pub prepared: Prepared,
}

struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], StoredError> {
        if n > self.0.len() {
            return Err(StoredError::Length);
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u32s(&mut self, n: usize) -> Result<Vec<u32>, StoredError> {
        Ok(self
            .take(n.checked_mul(4).ok_or(StoredError::Oversized)?)?
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }
    fn u64s(&mut self, n: usize) -> Result<Vec<u64>, StoredError> {
        Ok(self
            .take(n.checked_mul(8).ok_or(StoredError::Oversized)?)?
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
            .collect())
    }
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]))
}

/// Opens and checks the file at `path`.
pub fn load(path: &Path) -> Result<Loaded, StoredError> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let mut header = [0u8; HEADER];
    if len < HEADER as u64 {
        return Err(StoredError::Length);
    }
    file.read_exact(&mut header)?;
    if &header[..8] != MAGIC
        || u32::from_le_bytes([header[8], header[9], header[10], header[11]]) != FORMAT
    {
        return Err(StoredError::Foreign);
    }
    let seed = u64_at(&header, 24);
    if sum(seed, &header[..HEADER - 8]) != u64_at(&header, HEADER - 8) {
        return Err(StoredError::Checksum);
    }
    if u64_at(&header, 16) != build_version() {
        return Err(StoredError::OtherBuild);
    }
    let objects = u64_at(&header, 32);
    let terms = u64_at(&header, 40);
    let terms_bytes = u64_at(&header, 48);
    let postings = u64_at(&header, 56);
    let blocks = postings.div_ceil(BLOCK as u64);
    // Checked sums: a header with huge counts is refused, never wraps.
    let directory = objects
        .checked_mul(12)
        .and_then(|d| d.checked_add(terms.checked_mul(8)?))
        .and_then(|d| d.checked_add(4))
        .and_then(|d| d.checked_add(blocks.checked_mul(8)?))
        .and_then(|d| d.checked_add(terms_bytes))
        .ok_or(StoredError::Oversized)?;
    if directory > MAX_DIRECTORY || postings > u64::from(u32::MAX) || objects > u64::from(u32::MAX)
    {
        return Err(StoredError::Oversized);
    }
    let expected = (HEADER as u64)
        .checked_add(directory)
        .and_then(|d| d.checked_add(postings.checked_mul(8)?))
        .ok_or(StoredError::Oversized)?;
    if expected != len {
        return Err(StoredError::Length);
    }
    let mut dir = vec![0u8; directory as usize];
    file.read_exact(&mut dir)?;
    if sum(seed, &dir) != u64_at(&header, HEADER - 16) {
        return Err(StoredError::Checksum);
    }
    let (objects, terms, postings) = (objects as usize, terms as usize, postings as usize);
    let mut c = Cursor(&dir);
    let keys = c.u64s(objects)?;
    let body_len = c.u32s(objects)?;
    let ends = c.u32s(terms)?;
    let starts = c.u32s(terms + 1)?;
    let block_sums = c.u64s(blocks as usize)?;
    let text = std::str::from_utf8(c.take(terms_bytes as usize)?)
        .map_err(|_| StoredError::Inconsistent)?;
    // What a lookup relies on: terms cut at character boundaries, lists in order and in range.
    let ends_ok = ends.windows(2).all(|w| w[0] <= w[1])
        && ends
            .last()
            .map_or(text.is_empty(), |&e| e as usize == text.len())
        && ends.iter().all(|&e| text.is_char_boundary(e as usize));
    let starts_ok = starts.first() == Some(&0)
        && starts.windows(2).all(|w| w[0] <= w[1])
        && starts.last().is_some_and(|&s| s as usize == postings);
    if !ends_ok || !starts_ok {
        return Err(StoredError::Inconsistent);
    }
    let prepared = Prepared {
        terms: text.into(),
        ends: ends.into_boxed_slice(),
        starts: starts.into_boxed_slice(),
        postings: super::Lists::Stored(std::sync::Arc::new(OnDisk {
            file,
            path: path.to_path_buf(),
            seed,
            at: HEADER as u64 + directory,
            count: postings,
            objects,
            block_sums: block_sums.into_boxed_slice(),
        })),
        body_len: body_len.into_boxed_slice(),
    };
    let mut generation = [0u8; 32];
    generation.copy_from_slice(&header[64..96]);
    Ok(Loaded {
        seed,
        generation,
        keys,
        prepared,
    })
}

/// Writes `prepared`, made from `corpus`, to `path` (whose directory exists), each object keyed
/// with `file(seed, object)` (see [`key`]), under the trusted `generation` stamp (or zeros): to
/// a temporary
/// file, then renamed over the old one, so that a reader sees one whole file or the other.
pub fn save(
    path: &Path,
    prepared: &Prepared,
    corpus: Corpus<'_>,
    generation: [u8; 32],
    file: impl Fn(u64, &Object) -> Option<u64> + Sync,
) -> Result<(), StoredError> {
    let mut seed = [0u8; 8];
    let _ = getrandom::fill(&mut seed);
    let seed = u64::from_le_bytes(seed);
    let lists = prepared.all_postings()?;
    let keys = keys(seed, corpus, 0, |o| file(seed, o));
    let mut dir = Vec::new();
    for k in &keys {
        dir.extend_from_slice(&k.to_le_bytes());
    }
    for l in prepared.body_len.iter() {
        dir.extend_from_slice(&l.to_le_bytes());
    }
    for e in prepared.ends.iter() {
        dir.extend_from_slice(&e.to_le_bytes());
    }
    for s in prepared.starts.iter() {
        dir.extend_from_slice(&s.to_le_bytes());
    }
    let encode = |chunk: &[Posting], into: &mut Vec<u8>| {
        into.clear();
        for p in chunk {
            into.extend_from_slice(&p.position.to_le_bytes());
            into.extend_from_slice(&p.packed.to_le_bytes());
        }
    };
    let mut scratch = Vec::with_capacity(BLOCK * 8);
    for chunk in lists.chunks(BLOCK) {
        encode(chunk, &mut scratch);
        dir.extend_from_slice(&sum(seed, &scratch).to_le_bytes());
    }
    dir.extend_from_slice(prepared.terms.as_bytes());
    let mut header = Vec::with_capacity(HEADER);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&FORMAT.to_le_bytes());
    header.extend_from_slice(&0u32.to_le_bytes());
    header.extend_from_slice(&build_version().to_le_bytes());
    header.extend_from_slice(&seed.to_le_bytes());
    for n in [
        keys.len(),
        prepared.ends.len(),
        prepared.terms.len(),
        lists.len(),
    ] {
        header.extend_from_slice(&(n as u64).to_le_bytes());
    }
    header.extend_from_slice(&generation);
    header.extend_from_slice(&sum(seed, &dir).to_le_bytes());
    let header_sum = sum(seed, &header);
    header.extend_from_slice(&header_sum.to_le_bytes());
    crate::write::write_atomic_with(path, crate::write::Existing::Replace, |file| {
        let mut out = BufWriter::with_capacity(1 << 20, file);
        out.write_all(&header)?;
        out.write_all(&dir)?;
        for chunk in lists.chunks(BLOCK) {
            encode(chunk, &mut scratch);
            out.write_all(&scratch)?;
        }
        out.flush()
    })?;
    Ok(())
}
