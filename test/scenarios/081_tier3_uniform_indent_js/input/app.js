function start(ready) {
    if (ready) {
        launch();
    }
    return ready;
}
