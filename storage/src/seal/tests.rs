use super::*;

fn sealer() -> (tempfile::TempDir, Sealer) {
    let dir = tempfile::tempdir().unwrap();
    let ring =
        Keyring::create(&super::Home::Dir(dir.path().into()), &MasterKey::generate()).unwrap();
    (dir, Sealer::new(ring))
}

const BATCH: &str = "019ac0de-1234-7abc-8def-0123456f0000";
const MEMBER: &str = "019ac0de-1234-7abc-8def-0123456f0001";

#[test]
fn a_value_opens_only_where_it_was_sealed() {
    let (_dir, sealer) = sealer();
    let sealed = sealer.seal(Sealed::Requests, MEMBER.as_bytes(), b"Jane Roe 1970-01-01");
    assert!(is_sealed(&sealed));
    assert!(!sealed.windows(8).any(|w| w == b"Jane Roe"));
    assert_eq!(
        sealer
            .open(Sealed::Requests, MEMBER.as_bytes(), &sealed)
            .unwrap(),
        b"Jane Roe 1970-01-01"
    );
    let other = "019ac0de-1234-7abc-8def-0123456f0002";
    assert!(sealer
        .open(Sealed::Requests, other.as_bytes(), &sealed)
        .is_err());
    assert!(sealer
        .open(Sealed::Deliveries, MEMBER.as_bytes(), &sealed)
        .is_err());
    let mut altered = sealed.clone();
    *altered.last_mut().unwrap() ^= 1;
    assert!(sealer
        .open(Sealed::Requests, MEMBER.as_bytes(), &altered)
        .is_err());
    assert!(sealer
        .open(Sealed::Requests, MEMBER.as_bytes(), b"\x02plain")
        .is_err());
}

#[test]
fn a_batch_and_its_members_share_one_epoch_named_by_the_batch_id() {
    let (_dir, sealer) = sealer();
    let mut chunk = BATCH.as_bytes().to_vec();
    chunk.extend_from_slice(&0u16.to_be_bytes());
    let in_batch = sealer.seal(Sealed::Intake, &chunk, b"x");
    let own = sealer.seal(Sealed::Requests, MEMBER.as_bytes(), b"x");
    assert_eq!(in_batch[1..5], own[1..5]);
    let hour = u32::from_be_bytes(own[1..5].try_into().unwrap());
    // 0x019ac0de1234 ms since 1970 is in November 2025.
    assert_eq!(hour, (0x019a_c0de_1234u64 / 1000 / 3600) as u32);
}

#[test]
fn destroying_an_epoch_makes_its_values_unreadable() {
    let (_dir, sealer) = sealer();
    let sealed = sealer.seal(Sealed::Requests, MEMBER.as_bytes(), b"secret");
    let epoch = u32::from_be_bytes(sealed[1..5].try_into().unwrap());
    sealer.keyring.destroy(epoch).unwrap();
    sealer.derived.write().unwrap().clear();
    assert!(matches!(
        sealer.open(Sealed::Requests, MEMBER.as_bytes(), &sealed),
        Err(StorageError::KeyDestroyed(_))
    ));
}

#[test]
fn a_recording_opens_under_its_own_name_only() {
    let (_dir, sealer) = sealer();
    let audio = b"RIFF\0\0\0\0WAVEfmt ".repeat(10);
    let file = sealer.seal_file(&RequestId::from(MEMBER), "c1.wav", &audio);
    assert!(!file.windows(4).any(|w| w == b"RIFF"));
    assert_eq!(sealer.open_file("c1.wav", &file).unwrap(), audio);
    assert!(sealer.open_file("c2.wav", &file).is_err());
}

#[test]
fn index_hashes_are_keyed() {
    let (_dir, one) = sealer();
    let (_dir2, two) = sealer();
    assert_eq!(one.index_hash(b"CLM-1"), one.index_hash(b"CLM-1"));
    assert_ne!(one.index_hash(b"CLM-1"), two.index_hash(b"CLM-1"));
}
