function start(ready) {
    if (ready) {
        prepare();
        launch();
    }
    return ready;
}
