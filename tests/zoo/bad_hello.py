import zoo

zoo.play(lambda out, message: None, hello_version=99)
