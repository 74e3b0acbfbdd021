//! A node standing by on a shared PostgreSQL database answers reads itself, from the database, and forwards
//! only what changes state: it serves a request, lists, the token exchange and the console's reads while
//! the holder is stopped (SIGSTOP), audits those reads in the one chain the holder extends, and refuses a
//! key the holder revoked at once.

use std::net::IpAddr;
use std::process::Command;
use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::{create_vob, status_and_json, Api, BinaryServer, TestConfig};
use crate::several_nodes::{on_a_shared_database, Node};

/// A holder and a standby on a fresh database, both serving.
async fn holder_and_standby() -> (tempfile::TempDir, Node, BinaryServer, BinaryServer) {
    let dir = tempfile::tempdir().unwrap();
    let (config, key) = on_a_shared_database(dir.path(), &mut TestConfig::default());
    let holder = Node::new(&config, &key).start();
    holder.wait_ready().await;
    let standby_node = Node::new(&config, &key);
    let standby = standby_node.start();
    standby.wait_ready().await;
    (dir, standby_node, holder, standby)
}

/// SIGSTOP or SIGCONT to `server`. A holder stopped for less than its lease's fence (3 s) keeps it.
fn signal(server: &BinaryServer, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// A client of its own address, so the audit tells its calls from the nodes' and the test's others.
fn client_from(address: &str, timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(address.parse::<IpAddr>().unwrap())
        .timeout(timeout)
        .build()
        .unwrap()
}

#[actix_web::test]
async fn a_standby_answers_reads_itself_while_the_holder_is_stopped_and_forwards_writes() {
    let (_dir, _node, holder, standby) = holder_and_standby().await;
    let token = holder.live_token().await;
    let id = create_vob(&holder, &token).await;
    let via_standby = Api::with_client(
        standby.address.clone(),
        client_from("127.0.0.1", Duration::from_secs(2)),
    );

    signal(&holder, "-STOP");
    let (status, read) = via_standby
        .get_json(&format!("/v1/requests/{id}"), &token)
        .await;
    let (list_status, listed) = via_standby.get_json("/v1/requests", &token).await;
    let (console_status, console) = via_standby
        .get_json(&format!("/console/api/requests/{id}"), &token)
        .await;
    let (schemas_status, _) = via_standby.get_json("/v1/schemas", &token).await;
    let exchanged = via_standby.client.get(via_standby.url("/v1/auth"));
    let exchanged = exchanged
        .header("Switchboard-API-Key", crate::helpers::LIVE_KEY)
        .header("Switchboard-API-Secret", crate::helpers::LIVE_SECRET)
        .send()
        .await;
    // A create goes to the holder, which does not answer while it is stopped.
    let created = via_standby
        .client
        .post(via_standby.url("/v1/requests"))
        .bearer_auth(&token)
        .json(&json!({ "schemaId": "vob-basic" }))
        .timeout(Duration::from_millis(700))
        .send()
        .await;
    signal(&holder, "-CONT");

    assert_eq!((status, &read["requestId"]), (200, &json!(id)), "{read}");
    assert_eq!(list_status, 200, "{listed}");
    assert_eq!(listed["requests"][0]["requestId"], json!(id), "{listed}");
    assert_eq!(console_status, 200, "{console}");
    assert_eq!(schemas_status, 200);
    let (auth_status, issued) = status_and_json(exchanged.expect("the exchange answered")).await;
    assert_eq!(auth_status, 200, "{issued}");
    // The token the standby issued works on the holder: one secret for every node.
    let issued = issued["token"].as_str().unwrap();
    assert_eq!(
        holder
            .get_json(&format!("/v1/requests/{id}"), issued)
            .await
            .0,
        200
    );
    assert!(
        created.as_ref().is_err_and(reqwest::Error::is_timeout),
        "a create waits for the holder: {created:?}"
    );
    // Writes on a path the standby reads still go to the holder, which answers them.
    let (status, created) = via_standby
        .post_json(
            "/v1/requests",
            &token,
            &json!({ "schemaId": "vob-basic", "inputs": {} }),
        )
        .await;
    assert_eq!(status, 400, "the holder validated it: {created}");
    assert_eq!(standby.terminate(), Some(0));
    assert_eq!(holder.terminate(), Some(0));
}

/// The `request.read` events of `id` read through `api`'s admin API, by the address that read.
async fn reads_by_address(api: &Api, id: &str) -> (usize, usize) {
    let (mut holder, mut standby) = (0, 0);
    let mut token: Option<String> = None;
    loop {
        let mut path = format!("/admin/v1/audit?action=request.read&targetId={id}&pageSize=1000");
        if let Some(token) = &token {
            path.push_str(&format!("&pageToken={token}"));
        }
        let (status, page) = status_and_json(api.admin(Method::GET, &path, None).await).await;
        assert_eq!(status, 200, "{page}");
        for event in page["events"].as_array().unwrap() {
            match event["ip"].as_str() {
                Some("127.0.0.2") => holder += 1,
                Some("127.0.0.3") => standby += 1,
                other => panic!("a read from {other:?}"),
            }
        }
        match page["nextPageToken"].as_str() {
            Some(next) => token = Some(next.to_owned()),
            None => return (holder, standby),
        }
    }
}

#[actix_web::test]
async fn reads_on_both_nodes_at_once_extend_one_audit_chain_that_verifies() {
    let (_dir, _node, holder, standby) = holder_and_standby().await;
    let token = holder.live_token().await;
    let id = create_vob(&holder, &token).await;
    let on_holder = Api::with_client(
        holder.address.clone(),
        client_from("127.0.0.2", Duration::from_secs(30)),
    );
    let on_standby = Api::with_client(
        standby.address.clone(),
        client_from("127.0.0.3", Duration::from_secs(30)),
    );
    const READS: usize = 150;
    // Both nodes append their reads' events at once, each twice a second or more.
    let read = |api: Api| {
        let (token, id) = (token.clone(), id.clone());
        async move {
            for _ in 0..READS {
                let (status, _) = api.get_json(&format!("/v1/requests/{id}"), &token).await;
                assert_eq!(status, 200);
            }
        }
    };
    futures::join!(read(on_holder.clone()), read(on_standby.clone()));
    // Some of the standby's reads while the holder is stopped: they cannot be the holder's.
    signal(&holder, "-STOP");
    for _ in 0..10 {
        let (status, _) = on_standby
            .get_json(&format!("/v1/requests/{id}"), &token)
            .await;
        assert_eq!(status, 200);
    }
    // Written within half a second, while the holder still sleeps.
    actix_web::rt::time::sleep(Duration::from_millis(900)).await;
    signal(&holder, "-CONT");
    actix_web::rt::time::sleep(Duration::from_millis(800)).await;

    assert_eq!(
        reads_by_address(&holder, &id).await,
        (READS, READS + 10),
        "every read is in the log once, the standby's included"
    );
    let (status, verified) = status_and_json(
        holder
            .admin(Method::GET, "/admin/v1/audit/verify", None)
            .await,
    )
    .await;
    assert_eq!((status, &verified["ok"]), (200, &json!(true)), "{verified}");
    // The standby's last events, written as it stops, chain on too.
    assert_eq!(standby.terminate(), Some(0));
    let (status, verified) = status_and_json(
        holder
            .admin(Method::GET, "/admin/v1/audit/verify", None)
            .await,
    )
    .await;
    assert_eq!((status, &verified["ok"]), (200, &json!(true)), "{verified}");
    assert_eq!(holder.terminate(), Some(0));
}

#[actix_web::test]
async fn a_key_the_holder_revokes_is_refused_on_the_standby_at_once() {
    let (_dir, _node, holder, standby) = holder_and_standby().await;
    let account = |credentials: Value| {
        json!({
            "daily_call_capacity": 10,
            "schemas": ["vob-basic"],
            "credentials": credentials,
        })
    };
    let kept =
        json!({ "environment": "production", "key": "sk_live_kept", "secret": "kept-secret-1" });
    let revoked =
        json!({ "environment": "sandbox", "key": "sk_test_revoked", "secret": "revoked-secret-1" });
    let put = holder
        .admin(
            Method::PUT,
            "/admin/v1/accounts/acme",
            Some(account(json!([kept, revoked]))),
        )
        .await;
    assert_eq!(put.status(), 201);
    // Tokens the standby issued, and reads that had it read the account.
    let kept_token = standby.token("sk_live_kept", "kept-secret-1").await;
    let revoked_token = standby.token("sk_test_revoked", "revoked-secret-1").await;
    for token in [&kept_token, &revoked_token] {
        assert_eq!(standby.get_json("/v1/requests", token).await.0, 200);
    }

    let put = holder
        .admin(
            Method::PUT,
            "/admin/v1/accounts/acme",
            Some(account(json!([kept]))),
        )
        .await;
    assert_eq!(put.status(), 200);
    // Answered by the standby alone: the holder is stopped.
    signal(&holder, "-STOP");
    let refused = standby.get_json("/v1/requests", &revoked_token).await;
    let exchange = standby
        .client
        .get(standby.url("/v1/auth"))
        .header("Switchboard-API-Key", "sk_test_revoked")
        .header("Switchboard-API-Secret", "revoked-secret-1")
        .timeout(Duration::from_secs(2))
        .send()
        .await;
    let still = standby.get_json("/v1/requests", &kept_token).await;
    signal(&holder, "-CONT");

    assert_eq!(refused.0, 401, "{}", refused.1);
    let exchange = status_and_json(exchange.expect("the standby answered")).await;
    assert_eq!(exchange, (401, json!({ "error": "INVALID_API_KEY" })));
    assert_eq!(still.0, 200, "{}", still.1);
    assert_eq!(standby.terminate(), Some(0));
    assert_eq!(holder.terminate(), Some(0));
}

/// `create_vob`'s inputs for the patient `first`.
fn vob_for(first: &str) -> Value {
    json!({
        "schemaId": "vob-basic",
        "inputs": {
            "payerName": "Aetna", "phoneNumber": "(800) 555-0123", "memberId": "W123456789",
            "patientFirstName": first, "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02",
            "billingProviderNpi": "1234567890"
        }
    })
}

#[actix_web::test]
async fn a_purge_on_the_holder_leaves_the_standby_reading_batch_mates_and_new_requests() {
    let (_dir, _node, holder, standby) = holder_and_standby().await;
    let token = holder.live_token().await;
    let batch = json!({ "requests": [vob_for("Ann"), vob_for("Bea"), vob_for("Cid")] });
    let (status, created) = holder.post_requests(&token, &batch).await;
    assert_eq!(status, 200, "{created}");
    let members: Vec<String> = created["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["requestId"].as_str().unwrap().to_owned())
        .collect();
    // Read through the standby first: it has derived the batch's key from the hour's epoch key.
    let mut before = Vec::new();
    for id in &members {
        before.push(standby.read_request(&token, id).await);
    }

    // The purge gives the batch a new key and replaces the hour's epoch key, on the holder.
    let purged = holder
        .admin(
            Method::DELETE,
            &format!("/admin/v1/requests/{}", members[1]),
            None,
        )
        .await;
    assert_eq!(purged.status(), 204);
    // A request created after the purge is sealed under the hour's new epoch key.
    let later = create_vob(&holder, &token).await;

    let gone = standby
        .get_json(&format!("/v1/requests/{}", members[1]), &token)
        .await;
    assert_eq!(
        (gone.0, gone.1["error"].as_str()),
        (404, Some("REQUEST_NOT_FOUND")),
        "the purged request is gone on the standby at once: {}",
        gone.1
    );
    for (id, was) in [(&members[0], &before[0]), (&members[2], &before[2])] {
        let (status, now) = standby
            .get_json(&format!("/v1/requests/{id}"), &token)
            .await;
        assert_eq!(
            status, 200,
            "a batch-mate sealed again under its new key: {now}"
        );
        assert_eq!(&now, was, "read back as before the purge");
    }
    let (status, read) = standby
        .get_json(&format!("/v1/requests/{later}"), &token)
        .await;
    assert_eq!((status, &read["requestId"]), (200, &json!(later)), "{read}");
    let (status, listed) = standby
        .get_json(
            &format!(
                "/v1/requests?requestBatchId={}",
                before[0]["requestBatchId"].as_str().unwrap()
            ),
            &token,
        )
        .await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["requests"].as_array().unwrap().len(), 2, "{listed}");
    assert_eq!(standby.terminate(), Some(0));
    assert_eq!(holder.terminate(), Some(0));
}
