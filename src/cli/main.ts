console.log("ratchet");
